import NIOCore

/// One client's connection: splits the bytes into request lines and performs what its `MPDSession` asks (write,
/// run commands on the executor, close) on the channel's event loop. It reads no more while a batch runs or while
/// the client does not take what was written, so a slow or flooding client costs one reply and one read buffer, and
/// never holds up the player or others. A lone `status` or `ping` is answered from the published state straight
/// from the bytes: the commonest request costs no string, no session turn and no task.
final class MPDConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var session = MPDSession()
    private var client: CommandExecutor.ClientState
    private let executor: CommandExecutor
    private let tracker: ChangeTracker
    private let connections: ConnectionRegistry
    private let maximumLineLength: Int
    private let timeout: TimeAmount
    private var subscription: Int?
    private var readHeld = false
    private var closing = false
    /// The start of a line whose newline has not come yet.
    private var partial: ByteBuffer?
    private var lastRead = NIODeadline.now()
    private var silenceCheck: Scheduled<Void>?

    init(executor: CommandExecutor, tracker: ChangeTracker, connections: ConnectionRegistry,
         maximumLineLength: Int, timeout: TimeAmount) {
        self.executor = executor
        self.tracker = tracker
        self.connections = connections
        self.maximumLineLength = maximumLineLength
        self.timeout = timeout
        client = executor.newClient
        session.locked = !client.authorized
    }

    func channelActive(context: ChannelHandlerContext) {
        connections.add(context.channel)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        subscription = tracker.subscribe { subsystems in
            loop.execute { bound.value.changed(subsystems) }
        }
        lastRead = .now()
        checkSilence(at: lastRead + timeout, context)
        write(context, Array("OK MPD 0.23.0\n".utf8))
        context.flush()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let subscription { tracker.unsubscribe(subscription) }
        subscription = nil
        silenceCheck?.cancel()
        silenceCheck = nil
        connections.remove(context.channel)
        closing = true
        context.fireChannelInactive()
    }

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        silenceCheck?.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        lastRead = .now()
        var bytes = unwrapInboundIn(data)
        if var start = partial.take() {
            start.writeBuffer(&bytes)
            bytes = start
        }
        while !closing, let newline = bytes.readableBytesView.firstIndex(of: 0x0A) {
            let length = newline - bytes.readerIndex
            guard length <= maximumLineLength else { return lineTooLong(context) }
            var line = bytes.readSlice(length: length)!
            bytes.moveReaderIndex(forwardBy: 1)
            if line.readableBytesView.last == 0x0D { line.moveWriterIndex(to: line.writerIndex - 1) }
            take(line, context)
        }
        guard !closing else { return }
        if bytes.readableBytes > 0 {
            guard bytes.readableBytes <= maximumLineLength else { return lineTooLong(context) }
            bytes.discardReadBytes()
            partial = bytes
        }
        context.flush()
    }

    /// One request line (without its newline).
    private func take(_ line: ByteBuffer, _ context: ChannelHandlerContext) {
        if session.isReady, client.authorized, let reply = executor.answerAtOnce(line.readableBytesView) {
            return write(context, reply)
        }
        perform(session.receive(String(buffer: line)), context, flush: false)
    }

    private func lineTooLong(_ context: ChannelHandlerContext) {
        partial = nil
        write(context, Array(MPDAck(.arg, "line too long; closing the connection").line.utf8))
        close(context)
    }

    /// The connection timeout: a client that sends nothing for that long is asked about (`MPDSession.silent`).
    private func checkSilence(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        silenceCheck = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.silenceDue() }
    }

    private func silenceDue() {
        guard let context, !closing else { return }
        let due = lastRead + timeout
        guard NIODeadline.now() >= due else { return checkSilence(at: due, context) }
        perform(session.silent(), context)
        if !closing { checkSilence(at: .now() + timeout, context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !closing else { return }
        close(context)
    }

    // MARK: Reading only when there is room

    func read(context: ChannelHandlerContext) {
        if session.isExecuting || !context.channel.isWritable {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        resumeReading(context)
        context.fireChannelWritabilityChanged()
    }

    private func resumeReading(_ context: ChannelHandlerContext) {
        guard readHeld, !session.isExecuting, context.channel.isWritable, !closing else { return }
        readHeld = false
        context.read()
    }

    // MARK: Actions

    private func changed(_ subsystems: Set<IdleSubsystem>) {
        guard let context, !closing else { return }
        perform(session.changed(subsystems), context)
    }

    private func perform(_ actions: [MPDSession.Action], _ context: ChannelHandlerContext, flush: Bool = true) {
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .send(let bytes):
                write(context, bytes)
            case .close:
                close(context)
                return
            case .execute(let lines, let mode):
                // A lone read of the published state is answered here and now, and what the session does next (the
                // next pipelined line, say) joins the actions: no second turn of the loop, and reads are not held
                // and resumed (two epoll_ctl calls) around it.
                if mode == .single, lines.count == 1, client.authorized, let reply = executor.answerAtOnce(lines[0].utf8) {
                    pending.append(contentsOf: session.completed(reply: reply, close: false))
                } else {
                    run(lines, mode, context)
                }
            }
        }
        if flush { context.flush() }
    }

    private func run(_ lines: [String], _ mode: MPDSession.ListMode, _ context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let executor = self.executor
        let state = client
        Task {
            var client = state
            let (reply, close) = await executor.run(lines, mode: mode, client: &client)
            let after = client
            loop.execute { bound.value.finished(reply, close: close, client: after) }
        }
    }

    private func finished(_ reply: [UInt8], close: Bool, client: CommandExecutor.ClientState) {
        guard let context, !closing else { return }
        self.client = client
        session.locked = !client.authorized
        perform(session.completed(reply: reply, close: close), context)
        resumeReading(context)
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func close(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

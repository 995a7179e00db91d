import NIOCore

/// One client's connection: performs what its `MPDSession` asks (write, run commands on the executor, close) on the
/// channel's event loop. It reads no more while a batch runs or while the client does not take what was written,
/// so a slow or flooding client costs one reply and one read buffer, and never holds up the player or others.
final class MPDConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = String
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var session = MPDSession()
    private var client: CommandExecutor.ClientState
    private let executor: CommandExecutor
    private let tracker: ChangeTracker
    private let connections: ConnectionRegistry
    private var subscription: Int?
    private var readHeld = false
    private var closing = false

    init(executor: CommandExecutor, tracker: ChangeTracker, connections: ConnectionRegistry) {
        self.executor = executor
        self.tracker = tracker
        self.connections = connections
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
        write(context, Array("OK MPD 0.23.0\n".utf8))
        context.flush()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let subscription { tracker.unsubscribe(subscription) }
        subscription = nil
        connections.remove(context.channel)
        closing = true
        context.fireChannelInactive()
    }

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        perform(session.receive(unwrapInboundIn(data)), context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // From the IdleStateHandler in front: no bytes came in for the connection timeout.
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read, !closing {
            perform(session.silent(), context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !closing else { return }
        if error is LineDecoder.LineTooLong {
            write(context, Array(MPDAck(.arg, "line too long; closing the connection").line.utf8))
        }
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

    private func perform(_ actions: [MPDSession.Action], _ context: ChannelHandlerContext) {
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
                if let reply = executor.answerAtOnce(lines, mode: mode, client: client) {
                    pending.append(contentsOf: session.completed(reply: reply, close: false))
                } else {
                    run(lines, mode, context)
                }
            }
        }
        context.flush()
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

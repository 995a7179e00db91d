import Hummingbird
import NIOCore
import NIOWebSocket
import HummingbirdWebSocket
import Logging
import Synchronization
import TonearmCore

extension WebFace {
    /// The most frames a client may fall behind by before it is dropped (it reconnects and starts from a `state`).
    static let backlogLimit = 256
    /// The kernel's send buffer of a WebSocket (it doubles it): frames are small, and a stuck client is found sooner.
    static let socketSendBuffer: SocketOptionValue = 64 << 10

    /// The frame for a Player event, written once and shared by every client that follows (with 100 clients a
    /// change is serialized once, not 100 times); nil for an event with no frame of its own.
    func sharedFrame(for item: Sequenced<PlayerEvent>) -> ByteBuffer? {
        if let cached = sharedFrames.withLock({ $0?.sequence == item.sequence ? $0?.frame : nil }) { return cached }
        guard let json = frame(for: item) else { return nil }
        let frame = ByteBuffer(bytes: json.bytes)
        sharedFrames.withLock { $0 = (item.sequence, frame) }
        return frame
    }

    /// `/api/v1/events`: a full state on connect, then every change, each with the Player's sequence number.
    func addEventSocket(to router: Router<SocketRequestContext>) {
        router.ws("/api/v1/events") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, _, context in
            await self.follow(inbound: inbound, channel: context.requestContext.channel)
        }
    }

    /// Follows the Player for one client until it goes away or falls too far behind. The Player's events reach the
    /// client's event loop straight from the publishing thread (`EventFanOut.listen`) and are written there: no task
    /// stands between a change and its frame.
    private func follow(inbound: WebSocketInboundStream, channel: any Channel) async {
        // A small send buffer: a client that stops reading then shows as frames waiting here after some 128 kB held
        // by the kernel, not after the megabytes Linux allows a socket by default, and is dropped that much sooner.
        _ = channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: Self.socketSendBuffer)
        let follower = EventFollower(face: self, channel: channel)
        // Listening before the state is read, so nothing between the two is missed.
        let listener = player.events.listen(first: true) { item in follower.offer(item) }
        follower.begin()
        await withTaskGroup(of: Void.self) { group in
            if let library { group.addTask { await self.pumpLibrary(library, into: follower) } }
            if let shares { group.addTask { await self.pumpShares(shares, into: follower) } }
            // The client's own frames say nothing to us; the stream ends when it closes, goes away or is dropped.
            do { for try await _ in inbound.messages(maxSize: 4096) {} } catch {}
            listener.cancel()
            group.cancelAll()
        }
    }

    /// What a Player event says to a client; nil for events with no frame of their own (queue edits are folded into
    /// `queue` frames, the tick interval is not shown).
    func frame(for item: Sequenced<PlayerEvent>) -> JSON? {
        let sequence = JSON.int(Int64(item.sequence))
        switch item.event {
        case .changed, .buffering, .replayGainModeChanged, .equalizerChanged, .crossfadeChanged, .outputChanged:
            return ["type": "state", "sequence": sequence, "state": Shapes.state(player.state)]
        case .seeked(let position):
            return ["type": "seeked", "sequence": sequence, "position": .seconds(micro: position)]
        case .tick(let id, let position, let length):
            return ["type": "tick", "sequence": sequence, "id": Shapes.id(id), "position": .seconds(micro: position),
                    "length": .seconds(micro: length > 0 ? length : nil)]
        case .trackFailed(_, let uri, let error):
            return ["type": "trackFailed", "sequence": sequence, "uri": .string(uri), "error": WebProblem(error).json]
        case .lyricsChanged(let id, _):
            return ["type": "lyrics", "sequence": sequence, "id": Shapes.id(id)]
        case .lyricsLineChanged(let id, let index, let start, let text):
            return ["type": "lyricsLine", "sequence": sequence, "id": Shapes.id(id), "index": .int(Int64(index)),
                    "start": start < 0 ? .null : .seconds(micro: start), "text": .string(text)]
        case .outputFailed(let name, let message):
            return ["type": "outputFailed", "sequence": sequence, "name": .string(name), "message": .string(message)]
        case .tickIntervalChanged, .trackListReplaced, .trackAdded, .trackRemoved, .trackMetadataChanged, .nowPlaying, .listened:
            return nil
        }
    }

    private func pumpLibrary<Library: LibraryAPI>(_ library: Library, into outbox: EventFollower) async {
        let subscription = library.events.subscribe(capacity: 64)
        defer { subscription.cancel() }
        for await item in subscription {
            let sequence = JSON.int(Int64(player.events.lastSequence))
            switch item.event.scanSignal {
            case .progress(let done, let total)?:
                outbox.send(["type": "scan", "sequence": sequence, "done": .int(Int64(done)), "total": .int(Int64(total))])
            case .finished(let added, let updated, let removed, let failed)?:
                outbox.send(["type": "scan", "sequence": sequence, "finished": true, "added": .int(Int64(added)),
                             "updated": .int(Int64(updated)), "removed": .int(Int64(removed)), "failed": .int(Int64(failed))])
            case nil:
                break
            }
        }
    }

    private func pumpShares<Shares: SharesAPI>(_ shares: Shares, into outbox: EventFollower) async {
        let subscription = shares.events.subscribe(capacity: 64)
        defer { subscription.cancel() }
        for await item in subscription {
            let sequence = JSON.int(Int64(player.events.lastSequence))
            switch item.event.shareSignal {
            case .offered(let offer):
                outbox.send(["type": "offer", "sequence": sequence, "offer": Shapes.offer(offer)])
            case .offerClosed(let id):
                outbox.send(["type": "offerClosed", "sequence": sequence, "id": .string(id)])
            case .received(let uri, _):
                outbox.send(["type": "received", "sequence": sequence, "uri": .string(uri)])
            case .fromDevice(_, _, _, _, let uri?, _):
                outbox.send(["type": "received", "sequence": sequence, "uri": .string(uri)])
            case .fromDevice, .rejected, .exportProgress, .exportFinished:
                break
            }
        }
    }
}

/// One WebSocket client's following of the Player, on its channel's event loop. Events are offered from any thread
/// and handled in order on the loop; at most `WebFace.backlogLimit` of them may wait there or in frames the client has
/// not taken yet: past that the client is dropped, so a stuck browser costs a bounded amount of memory and never
/// slows the Player or the other faces.
final class EventFollower: Sendable {
    private let face: WebFace
    private let channel: any Channel
    private let loop: any EventLoop
    /// Events offered and frames written that the client has not yet taken.
    private let backlog = Atomic<Int>(0)
    private let dropped = Atomic<Bool>(false)
    private struct Following {
        /// The last Player event taken (or the state's sequence at connect).
        var last: UInt64 = .max
        /// Queue edits seen since the last `queue` frame.
        var queueEdited = false
        var flushScheduled = false
        /// Whether a flush of the frames written is on its way.
        var sendScheduled = false
    }
    private let following: NIOLoopBoundBox<Following>

    init(face: WebFace, channel: any Channel) {
        self.face = face
        self.channel = channel
        loop = channel.eventLoop
        following = NIOLoopBoundBox.makeBoxSendingValue(Following(), eventLoop: channel.eventLoop)
    }

    /// The first frame: the state as it is when the loop gets to it. Events offered before that are older than it
    /// (the Player publishes a state before its event reaches a listener), so they are skipped.
    func begin() {
        charge()
        loop.execute {
            let state = self.face.player.state
            self.following.value.last = state.sequence
            self.write(["type": "state", "sequence": .int(Int64(state.sequence)), "state": Shapes.state(state)])
        }
    }

    /// A Player event, from the publishing thread.
    func offer(_ item: Sequenced<PlayerEvent>) {
        guard charge() else { return }
        loop.execute { self.take(item) }
    }

    /// A frame of a plugin's event (a scan's progress, a share), from any thread.
    func send(_ frame: JSON) {
        guard charge() else { return }
        loop.execute { self.write(frame) }
    }

    /// Counts one more thing waiting for the client; drops the client when that is one too many.
    @discardableResult
    private func charge() -> Bool {
        if dropped.load(ordering: .relaxed) { return false }
        if backlog.add(1, ordering: .relaxed).newValue > WebFace.backlogLimit {
            drop()
            return false
        }
        return true
    }

    private func settle() { backlog.subtract(1, ordering: .relaxed) }

    private func drop() {
        guard !dropped.exchange(true, ordering: .relaxed) else { return }
        face.logger.info("web face: a WebSocket client fell \(WebFace.backlogLimit) events behind and was dropped")
        let channel = channel
        loop.execute {
            // Policy violation (1008): too far behind; the frame is lost with the rest if the client reads nothing.
            var close = ByteBuffer()
            close.writeInteger(UInt16(1008))
            close.writeString("too far behind; reconnect")
            channel.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: close), promise: nil)
            channel.close(promise: nil)
        }
    }

    /// Handles one Player event on the loop: queue edits in a burst become one `queue` frame. A listener hears every
    /// event in order, so the numbers have no gap; should one ever show, the state as it is now follows it.
    private func take(_ item: Sequenced<PlayerEvent>) {
        loop.preconditionInEventLoop()
        let last = following.value.last
        guard last != .max, item.sequence > last else { return settle() }
        if item.sequence != last + 1 {
            flushQueue(last)
            let now = face.player.state
            charge()
            write(["type": "state", "sequence": .int(Int64(now.sequence)), "state": Shapes.state(now)])
        }
        following.value.last = item.sequence
        switch item.event {
        case .trackListReplaced, .trackAdded, .trackRemoved, .trackMetadataChanged:
            following.value.queueEdited = true
            // After the events already waiting on the loop, so a burst of edits is one frame.
            if !following.value.flushScheduled {
                following.value.flushScheduled = true
                loop.execute {
                    self.following.value.flushScheduled = false
                    self.flushQueue(self.following.value.last)
                }
            }
            return settle()
        default:
            flushQueue(item.sequence)
        }
        guard let frame = face.sharedFrame(for: item) else { return settle() }
        write(frame)
    }

    private func flushQueue(_ sequence: UInt64) {
        guard following.value.queueEdited else { return }
        following.value.queueEdited = false
        charge()
        write(["type": "queue", "sequence": .int(Int64(sequence)), "version": .int(Int64(face.player.state.snapshot.queueVersion))])
    }

    private func write(_ frame: JSON) { write(ByteBuffer(bytes: frame.bytes)) }

    /// Writes a text frame; what was charged for it is settled once the client has taken it (or the write failed).
    /// The frames of events handed over together (a pause's tick and its state) leave in one write to the socket:
    /// the flush comes after the tasks already waiting on the loop.
    private func write(_ text: ByteBuffer) {
        guard !dropped.load(ordering: .relaxed) else { return settle() }
        let promise = loop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { _ in self.settle() }
        channel.write(WebSocketFrame(fin: true, opcode: .text, data: text), promise: promise)
        guard !following.value.sendScheduled else { return }
        following.value.sendScheduled = true
        loop.execute {
            self.following.value.sendScheduled = false
            self.channel.flush()
        }
    }
}

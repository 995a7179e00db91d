import Hummingbird
import HummingbirdWebSocket
import Logging
import Synchronization
import TonearmCore

extension WebFace {
    /// The most frames a client may fall behind by before it is dropped (it reconnects and starts from a `state`).
    static let backlogLimit = 256

    /// The frame for a Player event, written once and shared by every client that follows (with 100 clients a
    /// change is serialized once, not 100 times); nil for an event with no frame of its own.
    func sharedFrame(for item: Sequenced<PlayerEvent>) -> String? {
        if let cached = sharedFrames.withLock({ $0?.sequence == item.sequence ? $0?.text : nil }) { return cached }
        guard let text = frame(for: item)?.text else { return nil }
        sharedFrames.withLock { $0 = (item.sequence, text) }
        return text
    }

    /// `/api/v1/events`: a full state on connect, then every change, each with the Player's sequence number.
    func addEventSocket(to router: Router<BasicWebSocketRequestContext>) {
        router.ws("/api/v1/events") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            await self.follow(inbound: inbound, outbound: outbound)
        }
    }

    private func follow(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        // Subscribed before the state is read, so nothing between the two is missed.
        let subscription = player.events.subscribe(capacity: 1024)
        let (frames, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.backlogLimit))
        let first = player.state
        let writer = Task {
            for await frame in frames {
                try Task.checkCancellation()
                try await outbound.write(.text(frame))
            }
        }
        // A client that stops reading leaves writes waiting forever: on overflow the writer is cancelled, not awaited.
        let logger = logger
        let outbox = Outbox(sink: sink) {
            logger.info("web face: a WebSocket client fell \(Self.backlogLimit) events behind and was dropped")
            writer.cancel()
        }
        outbox.send(["type": "state", "sequence": .int(Int64(first.sequence)), "state": Shapes.state(first)])
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.pump(subscription, from: first.sequence, into: outbox) }
            if let library { group.addTask { await self.pumpLibrary(library, into: outbox) } }
            if let shares { group.addTask { await self.pumpShares(shares, into: outbox) } }
            // The client's own frames say nothing to us; the stream ends when it closes or goes away.
            group.addTask {
                do { for try await _ in inbound.messages(maxSize: 4096) {} } catch {}
                outbox.finish()
                writer.cancel()
            }
            _ = await writer.result
            subscription.cancel()
            outbox.finish()
            group.cancelAll()
        }
        if outbox.overflowed { try? await outbound.close(.policyViolation, reason: "too far behind; reconnect") }
    }

    /// The Player's events as frames: queue edits in a burst become one `queue` frame; a gap in the numbers (events
    /// coalesced or dropped for this client) is followed by the state as it is now.
    private func pump(_ subscription: EventSubscription<PlayerEvent>, from start: UInt64, into outbox: Outbox) async {
        var last = start
        var queueEdited = false
        func flushQueue(_ sequence: UInt64) {
            guard queueEdited else { return }
            queueEdited = false
            outbox.send(["type": "queue", "sequence": .int(Int64(sequence)), "version": .int(Int64(player.state.snapshot.queueVersion))])
        }
        for await item in subscription {
            if item.sequence <= last { continue }
            if item.sequence != last + 1 {
                flushQueue(last)
                let now = player.state
                outbox.send(["type": "state", "sequence": .int(Int64(now.sequence)), "state": Shapes.state(now)])
            }
            last = item.sequence
            switch item.event {
            case .trackListReplaced, .trackAdded, .trackRemoved, .trackMetadataChanged:
                queueEdited = true
                if subscription.backlog == 0 { flushQueue(item.sequence) }
                continue
            default:
                flushQueue(item.sequence)
            }
            if let frame = sharedFrame(for: item) { outbox.send(text: frame) }
        }
    }

    /// What a Player event says to a client; nil for events with no frame of their own (queue edits are folded into
    /// `queue` frames, the tick interval is not shown).
    private func frame(for item: Sequenced<PlayerEvent>) -> JSON? {
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

    private func pumpLibrary<Library: LibraryAPI>(_ library: Library, into outbox: Outbox) async {
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

    private func pumpShares<Shares: SharesAPI>(_ shares: Shares, into outbox: Outbox) async {
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

/// One client's frames waiting to be written, at most `WebFace.backlogLimit` of them: past that the client is
/// dropped, so a stuck browser costs a bounded amount of memory and never slows the Player or the other faces.
final class Outbox: Sendable {
    private let sink: AsyncStream<String>.Continuation
    private let overflow: @Sendable () -> Void
    private let state = Mutex(false)

    init(sink: AsyncStream<String>.Continuation, overflow: @escaping @Sendable () -> Void) {
        self.sink = sink
        self.overflow = overflow
    }

    var overflowed: Bool { state.withLock { $0 } }

    func send(_ frame: JSON) { send(text: frame.text) }

    /// A frame already written out (one state frame is shared by every client).
    func send(text frame: String) {
        if case .dropped = sink.yield(frame) {
            let first = state.withLock { was in defer { was = true }; return !was }
            sink.finish()
            if first { overflow() }
        }
    }

    func finish() { sink.finish() }
}

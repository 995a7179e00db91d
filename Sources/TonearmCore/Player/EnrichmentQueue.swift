import Synchronization

/// Entries waiting for their source's complete metadata. The worker takes all that wait at once, so what piles up
/// while it probes is applied together.
final class EnrichmentQueue: Sendable {
    private let pending = Mutex<[(TrackID, any SourcePlugin)]>([])
    private let signal: AsyncStream<Void>.Continuation
    /// Yields when entries are waiting (once for any number of them).
    let signals: AsyncStream<Void>

    init() {
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func add(_ id: TrackID, _ plugin: any SourcePlugin) {
        pending.withLock { $0.append((id, plugin)) }
        signal.yield()
    }

    /// Everything waiting, oldest first; the queue is then empty.
    func take() -> [(TrackID, any SourcePlugin)] {
        pending.withLock { waiting in
            defer { waiting = [] }
            return waiting
        }
    }

    func finish() { signal.finish() }
}

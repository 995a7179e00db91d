import Dispatch
import Logging
import Synchronization

/// Writes the state file and the position record off the player's actor, in order, the latest state first. Encoding
/// a queue of 10,000 entries as JSON and fsyncing it takes hundreds of milliseconds; done on the actor, it held up
/// the next command by as much (an MPD client's `pause` took 0.3–1 s with such a queue).
final class StateWriter: Sendable {
    private struct Pending {
        /// The newest whole state not yet written; a newer one replaces it unwritten.
        var state: PersistedState?
        /// A position newer than `state` (or with no state pending).
        var position: (Int64, TrackID)?
        var draining = false
    }

    private let store: StateStore
    private let logger: Logger
    private let queue = DispatchQueue(label: "tonearm.state-writer", qos: .utility)
    private let pending = Mutex(Pending())

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Queues the whole state (it carries its position, so an older queued position is dropped).
    func save(_ state: PersistedState) {
        enqueue { $0.state = state; $0.position = nil }
    }

    /// Queues the position record alone.
    func savePosition(_ position: Int64, of track: TrackID) {
        enqueue { $0.position = (position, track) }
    }

    /// Returns once everything queued before the call is on disk (at shutdown).
    func flush() {
        queue.sync {}
    }

    private func enqueue(_ change: (inout Pending) -> Void) {
        let start = pending.withLock { p -> Bool in
            change(&p)
            defer { p.draining = true }
            return !p.draining
        }
        if start { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let job = pending.withLock { p -> (PersistedState?, (Int64, TrackID)?)? in
                guard p.state != nil || p.position != nil else {
                    p.draining = false
                    return nil
                }
                defer { p.state = nil; p.position = nil }
                return (p.state, p.position)
            }
            guard let (state, position) = job else { return }
            if let state {
                do { try store.save(state) } catch { logger.error("could not save state: \(error)") }
            }
            if let (microseconds, track) = position {
                do { try store.savePosition(microseconds, of: track) } catch { logger.error("could not save the position: \(error)") }
            }
        }
    }
}

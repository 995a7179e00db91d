/// Skipping what fails: an entry that failed is passed over until someone picks it again, and failures in a row stop
/// the queue once as many entries failed as it holds (nothing left that could play). A plain value the player asks.
struct FailureSkipper: Sendable, Equatable {
    /// What to do after an entry failed.
    enum Decision: Sendable, Equatable {
        /// It was not the loaded entry (a hand-over that failed): nothing more.
        case passOver
        /// Load the next playable entry (none: stop), paused if it was paused.
        case skip
        /// Stop: as many failed in a row as the queue holds.
        case halt
    }

    private(set) var failed: Set<TrackID> = []
    private(set) var inARow = 0

    /// Whether `id` is passed over.
    func skips(_ id: TrackID) -> Bool { failed.contains(id) }

    /// An entry was heard: failures no longer come in a row.
    mutating func heard() { inARow = 0 }

    /// Someone picked `id` (Go to, play from a position) or it left the queue: it is tried again.
    mutating func forgive(_ id: TrackID) { failed.remove(id) }

    /// The queue was cleared or replaced: nothing is passed over.
    mutating func forgiveAll() { failed = [] }

    /// `id` failed; `loaded`: it was the entry the engine played.
    mutating func failed(_ id: TrackID, loaded: Bool, queueCount: Int) -> Decision {
        failed.insert(id)
        guard loaded else { return .passOver }
        inARow += 1
        return inARow < max(1, queueCount) ? .skip : .halt
    }

    /// A stream that stalled: passed over from now on, without counting towards the row.
    mutating func stalled(_ id: TrackID) { failed.insert(id) }
}

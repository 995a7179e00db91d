import Synchronization

/// Where the playhead stands without asking the pipeline: a position at an instant and how fast it moves from there.
/// The Player sets it afresh from the pipeline at every change of status, seek, track and tick.
public struct PositionBasis: Sendable, Equatable {
    /// Microseconds into the current track at `instant`.
    public var position: Int64
    public var instant: ContinuousClock.Instant
    /// How fast the position moves (0 while it stands: paused, stopped, seeking, buffering).
    public var rate: Double
    /// The track's length in microseconds, past which the position never reads (nil when unknown).
    public var limit: Int64?

    public init(position: Int64 = 0, instant: ContinuousClock.Instant = .now, rate: Double = 0, limit: Int64? = nil) {
        self.position = position
        self.instant = instant
        self.rate = rate
        self.limit = limit
    }

    /// The position in microseconds at `now`.
    public func position(at now: ContinuousClock.Instant) -> Int64 {
        guard rate != 0, now > instant else { return position }
        let elapsed = instant.duration(to: now).components
        let micros = Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12
        var moved = position + Int64(micros * rate)
        if let limit, limit > 0 { moved = min(moved, max(limit, position)) }
        return max(0, moved)
    }

    /// The position in microseconds now.
    public var now: Int64 { position(at: .now) }
}

/// The player as every face reads it: one immutable value, replaced after every change, readable from any thread
/// without a hop to the Player actor.
public struct PlayerState: Sendable {
    /// The sequence number of the last event published before or with this state.
    public var sequence: UInt64
    public var snapshot: PlayerSnapshot
    public var position: PositionBasis
    /// Counts the publishes, events or not: two states of one channel with the same revision are the same state, so a
    /// face may keep what it made of one (the web face's JSON text) until the revision moves.
    public internal(set) var revision: UInt64 = 0

    public init(sequence: UInt64 = 0, snapshot: PlayerSnapshot = PlayerSnapshot(), position: PositionBasis = PositionBasis()) {
        self.sequence = sequence
        self.snapshot = snapshot
        self.position = position
    }
}

/// The latest `PlayerState` and the one fan-out of the Player's events, kept together so that a state and the event
/// announcing it carry one sequence number: a face that subscribes and then reads the state misses nothing.
public final class PlayerChannel: Sendable {
    private let latest = Mutex(PlayerState())
    /// Every Player event, to each subscriber through a bounded buffer of its own.
    public let events = EventFanOut<PlayerEvent>(coalesces: PlayerChannel.coalesces)

    public init() {}

    /// The state now.
    public var state: PlayerState { latest.withLock { $0 } }

    /// Part of the state now, read in place: a copy of the whole state retains each of its fields, a cost on a
    /// command's way to its reply.
    public func read<T: Sendable>(_ part: (PlayerState) -> T) -> T { latest.withLock { part($0) } }

    /// Replaces the state, and publishes `event` with it (if any); the state is readable before any subscriber
    /// hears the event. `deliver` false leaves the event to the listeners' next delivery, which the next publish
    /// makes: two events published at once then reach a face's thread in one wake-up. `taken`: a command's effect,
    /// whose caller is answered (`CommandTaken`) once the state is readable and before any listener runs.
    func publish(snapshot: PlayerSnapshot? = nil, position: PositionBasis? = nil, event: PlayerEvent? = nil,
                 deliver: Bool = true, taken: Bool = false) {
        latest.withLock { state in
            state.revision &+= 1
            if let snapshot { state.snapshot = snapshot }
            if let position { state.position = position }
            if let event { state.sequence = events.enqueue(event) }
        }
        if taken { CommandTaken.published() }
        // Outside the state's lock: a listener may read the state it announces. Also without an event of its own:
        // one left undelivered before goes out now.
        if deliver { events.deliverToListeners() }
    }

    /// A move between playing and paused made readable at once: the latest state takes the new status and a standing
    /// position basis, and the command's caller is answered (`CommandTaken`). The Player's full publication, with the
    /// whole snapshot and its event, follows after the answer: building that snapshot first (the queue, the outputs,
    /// the lyrics, ~20,000 instructions on a cold cache) was most of a PlayPause's way to its reply.
    func publishTaken(status: PlaybackStatus, position: Int64) {
        latest.withLock { state in
            state.revision &+= 1
            state.snapshot.status = status
            state.position = PositionBasis(position: position, instant: .now, rate: 0, limit: state.position.limit)
        }
        CommandTaken.published()
    }

    /// A slow subscriber's buffer keeps the newest snapshot and the newest tick rather than each of them.
    static func coalesces(_ older: PlayerEvent, _ newer: PlayerEvent) -> Bool {
        switch (older, newer) {
        case (.changed, .changed), (.tick, .tick), (.buffering, .buffering), (.lyricsLineChanged, .lyricsLineChanged): return true
        default: return false
        }
    }
}

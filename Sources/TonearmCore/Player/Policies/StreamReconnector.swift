import Foundation

/// Reconnecting a live stream that dropped, with a wait that grows with each attempt, and noticing a network buffer
/// that does not fill. A plain value: the player tells it what happened, with `now`, and performs the actions it
/// returns (timers included); it owns the buffer's fill level the faces show.
struct StreamReconnector: Sendable, Equatable {
    /// The two timers it runs.
    enum Timer: Sendable, Hashable {
        /// Reconnect now (`attempt` of the policy's attempts).
        case reconnect(attempt: Int)
        /// The buffer reached no new level for the stall timeout.
        case stall(generation: Int)

        var kind: TimerKind {
            switch self {
            case .reconnect: return .reconnect
            case .stall: return .stall
            }
        }
    }

    enum TimerKind: Sendable, Hashable { case reconnect, stall }

    enum Action: Sendable, Equatable {
        /// Start `timer` (replacing one of its kind); when it fires, tell the reconnector (`fired`).
        case schedule(Timer, after: Duration)
        case cancel(TimerKind)
        /// The fill level changed: tell the faces.
        case bufferingChanged(TrackID, Int)
        /// Load the live stream again, playing.
        case reload(TrackID)
    }

    /// What became of a dropped stream.
    enum Drop: Sendable, Equatable {
        /// Not a live stream that was heard: the usual end or failure.
        case notLive
        /// A reconnect waits for its turn (`delay`, attempt `attempt`), or one already did.
        case reconnecting(attempt: Int, delay: Duration)
        case alreadyReconnecting
        /// The attempts are used up: the player moves on.
        case gaveUp(attempts: Int)
    }

    /// A stream heard for this long counts as having recovered: a later drop starts counting attempts afresh.
    static let recovery: Duration = .seconds(20)

    let policy: StreamReconnectPolicy
    /// The live entry being reconnected (or last heard), its attempts so far, and when it was last heard starting.
    private(set) var trackID: TrackID?
    private(set) var attempts = 0
    private(set) var startedAt: ContinuousClock.Instant?
    /// The attempt whose timer runs; nil when no reconnect waits.
    private(set) var waiting: Int?
    /// The buffer's fill level, 0…100 (100 when nothing buffers).
    private(set) var level = 100
    private var stallGeneration = 0
    /// Whether a stall timer was started since the watch was last stopped, and the highest level it saw: only a new
    /// high restarts it (a level that swings, 34, 43, 34…, is no progress).
    private var stallWatching = false
    private var stallPeak = -1

    init(policy: StreamReconnectPolicy) {
        self.policy = policy
    }

    var isReconnecting: Bool { waiting != nil }

    /// A stream started (a reconnect that worked, or a new track). `reconnected`: it is the live entry heard before.
    mutating func started(_ id: TrackID, now: ContinuousClock.Instant) -> (reconnected: Bool, actions: [Action]) {
        let reconnected = trackID == id && startedAt != nil
        var actions: [Action] = []
        if trackID != id {
            actions += cancelReconnect() + stopStallWatch()
            trackID = id
            attempts = 0
        }
        startedAt = now
        if level != 100 { actions += buffering(id, 100) }
        return (reconnected, actions)
    }

    /// The entry `id` dropped (ended, failed or stalled); `live`: the queue knows it as a live stream.
    mutating func dropped(_ id: TrackID, live: Bool, now: ContinuousClock.Instant) -> (Drop, [Action]) {
        guard live, trackID == id, let startedAt else { return (.notLive, []) }
        // One drop, one attempt: the source's own error after the stall timer fired (or the other way round) is the
        // same drop, already being reconnected.
        if waiting != nil { return (.alreadyReconnecting, []) }
        if now - startedAt > Self.recovery { attempts = 0 }
        guard attempts < policy.attempts else {
            let tried = attempts
            trackID = nil
            attempts = 0
            self.startedAt = nil
            return (.gaveUp(attempts: tried), [])
        }
        attempts += 1
        waiting = attempts
        let delay = policy.delay(beforeAttempt: attempts)
        return (.reconnecting(attempt: attempts, delay: delay),
                buffering(id, 0) + [.schedule(.reconnect(attempt: attempts), after: delay)])
    }

    /// A reconnect timer fired: reload when it is still the one waiting, the entry is current, and the user did not
    /// pause or stop meanwhile (their word wins).
    mutating func reconnectDue(attempt: Int, current: TrackID?, playing: Bool) -> [Action] {
        guard waiting == attempt, attempts == attempt, let id = trackID, current == id else { return [] }
        waiting = nil
        return playing ? [.reload(id)] : []
    }

    /// The user chose something else, paused or stopped: a waiting reconnect is dropped.
    mutating func cancelReconnect() -> [Action] {
        guard waiting != nil else { return [] }
        waiting = nil
        return [.cancel(.reconnect)]
    }

    /// The track changed or stopped: no stall watch.
    mutating func stopStallWatch() -> [Action] {
        stallGeneration += 1
        stallWatching = false
        stallPeak = -1
        return [.cancel(.stall)]
    }

    /// A live stream just loaded must bring data within the stall timeout, as a playing one must: its buffer starts
    /// empty, watched from now.
    mutating func newLiveStream(_ id: TrackID) -> [Action] { buffering(id, 0) }

    /// The fill level of `id`'s buffer.
    mutating func buffering(_ id: TrackID, _ percent: Int) -> [Action] {
        let level = min(100, max(0, percent))
        var actions: [Action] = []
        if level != self.level {
            self.level = level
            actions.append(.bufferingChanged(id, level))
        }
        if level >= 100 {
            actions += watchForStall(level)
            stallPeak = -1
        } else if !stallWatching || level > stallPeak {
            stallPeak = level
            actions += watchForStall(level)
        }
        return actions
    }

    /// Below 100 the buffer must fill: a stream that reaches no new level for the timeout gets (next to) no data.
    private mutating func watchForStall(_ level: Int) -> [Action] {
        stallGeneration += 1
        guard level < 100 else { return [.cancel(.stall)] }
        stallWatching = true
        return [.schedule(.stall(generation: stallGeneration), after: policy.stallTimeout)]
    }

    /// A stall timer fired: true when it is the latest, no reconnect waits and the buffer is still not full (the
    /// player then treats the stream as dropped).
    func isStalled(generation: Int) -> Bool {
        generation == stallGeneration && waiting == nil && level < 100
    }
}

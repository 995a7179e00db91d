/// When `Tick` is emitted: every interval while playing, the cadence counted from the last (re)start (a play, a
/// seek that landed). A plain value: the player tells it the status and when its timer fires, and performs what it
/// returns; the repeating timer itself is the player's task.
struct TickSchedule: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// (Re)start the repeating timer for `generation`, every `interval`; it reports with `fired`.
        case start(generation: Int, every: Duration)
        case stop
        /// Emit a Tick now (the faces' position basis is set afresh with it).
        case tick
    }

    private(set) var interval: Duration
    private(set) var generation = 0
    private(set) var running = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// Ticks from now (any earlier timer ends): a play or a landed seek restarts the cadence.
    mutating func restart() -> [Action] {
        generation += 1
        running = true
        return [.start(generation: generation, every: interval)]
    }

    mutating func stop() -> [Action] {
        generation += 1
        guard running else { return [] }
        running = false
        return [.stop]
    }

    /// After every command and engine event: ticks run exactly while playing.
    mutating func follow(playing: Bool) -> [Action] {
        if playing { return running ? [] : restart() }
        return running ? stop() : []
    }

    /// A new interval, used from the next (re)start.
    mutating func setInterval(_ new: Duration) {
        interval = new
    }

    /// The timer of `generation` fired: whether it goes on, and what to do now. Promised playing but not moving yet
    /// (the engine still starting, a track opening): no time event to tell.
    mutating func fired(generation: Int, playing: Bool, pipelinePlaying: Bool) -> (goesOn: Bool, actions: [Action]) {
        guard generation == self.generation else { return (false, []) }
        guard playing else {
            running = false
            return (false, [])
        }
        return (true, pipelinePlaying ? [.tick] : [])
    }
}

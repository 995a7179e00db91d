/// When a listen counts and when a track was skipped, as a plain value: ListenBrainz's rule, a listen counts once
/// half the track or 4 minutes was heard, whichever comes first; moving on before that is a skip. Heard time is time
/// spent playing, so seeking forward adds nothing and a pause or a seek breaks nothing. A live stream counts per
/// title. Whether it plays changes with what the engine reports, at the moment the engine saw it (`observe`,
/// `ended`); the player's own looks in between (`checkpoint`) only make a count come on time.
struct PlayCounter: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// Count a listen of `id`, begun at `startedAt`, after `heard` of playing.
        case count(TrackID, title: String?, startedAt: ContinuousClock.Instant, heard: Duration)
        /// Count a skip of `id`.
        case skip(TrackID)
    }

    /// The longest a listen must be heard to count.
    static let enough: Duration = .seconds(240)

    struct Listening: Sendable, Equatable {
        var id: TrackID
        var title: String?
        var needed: Duration
        var startedAt: ContinuousClock.Instant
        var heard: Duration = .zero
        var counted = false
        /// It played to its end: nothing after that is heard of it.
        var ended = false
    }

    private(set) var listening: Listening?
    /// When time last counted as heard (nil: not playing).
    private var playingSince: ContinuousClock.Instant?
    /// Up to when heard time was counted: a report stamped earlier, handled after a checkpoint, is taken as of then
    /// (time never runs back for the count).
    private var countedUpTo: ContinuousClock.Instant?

    /// What must be heard of a track of `length` µs (nil or 0: unknown, as for a live stream's song).
    static func needed(length: Int64?) -> Duration {
        guard let length, length > 0 else { return enough }
        return min(.microseconds(length / 2), enough)
    }

    /// A track began to be heard (the next one after an end, or one picked); the one before is left as it stands.
    mutating func started(_ id: TrackID, title: String?, length: Int64?, playing: Bool, at time: ContinuousClock.Instant) -> [Action] {
        let actions = observe(playing: playing, at: time)
        let now = countedUpTo ?? time
        listening = Listening(id: id, title: title, needed: Self.needed(length: length), startedAt: now)
        playingSince = playing ? now : nil
        return actions
    }

    /// The player is (or is not) playing at `now`: time since the last observation counts as heard if it was.
    mutating func observe(playing: Bool, at time: ContinuousClock.Instant) -> [Action] {
        let now = max(time, countedUpTo ?? time)
        countedUpTo = now
        guard var l = listening else {
            playingSince = playing ? now : nil
            return []
        }
        if let since = playingSince, now > since, !l.ended { l.heard += since.duration(to: now) }
        playingSince = playing ? now : nil
        var actions: [Action] = []
        if !l.counted, l.heard >= l.needed {
            l.counted = true
            actions.append(.count(l.id, title: l.title, startedAt: l.startedAt, heard: l.heard))
        }
        listening = l
        return actions
    }

    /// What was being heard played to its end at `now`: heard up to then, and no longer.
    mutating func ended(at now: ContinuousClock.Instant) -> [Action] {
        let actions = observe(playing: false, at: now)
        listening?.ended = true
        return actions
    }

    /// A look between the engine's reports: what was heard so far counts (a listen counts on time), what plays is
    /// unchanged. While nothing plays it does nothing, so a start the engine reports later still counts from when it
    /// happened.
    mutating func checkpoint(at now: ContinuousClock.Instant) -> [Action] {
        guard playingSince != nil else { return [] }
        return observe(playing: true, at: now)
    }

    /// The length of what is being heard came to be known or changed (the pipeline's duration, tags read after it
    /// started): half of it, up to 4 minutes, is what must be heard from now on, and what was heard already counts.
    mutating func lengthChanged(_ id: TrackID, to length: Int64?, at now: ContinuousClock.Instant) -> [Action] {
        guard var l = listening, l.id == id, !l.counted else { return [] }
        l.needed = Self.needed(length: length)
        listening = l
        return observe(playing: playingSince != nil, at: now)
    }

    /// The user moved on (Next, Previous, a pick, a new queue) from what plays: a skip if it had not counted.
    mutating func movedOn(at now: ContinuousClock.Instant, playing: Bool) -> [Action] {
        var actions = observe(playing: playing, at: now)
        if let l = listening, !l.counted, !l.ended, l.heard > .zero { actions.append(.skip(l.id)) }
        listening = nil
        return actions
    }

    /// A live stream's song changed: the title heard so far is closed, the next one counts on its own.
    mutating func titleChanged(_ id: TrackID, to title: String?, playing: Bool, at now: ContinuousClock.Instant) -> [Action] {
        guard listening?.id == id, listening?.title != title else { return [] }
        return started(id, title: title, length: nil, playing: playing, at: now)
    }

    /// Playback stopped or the queue emptied: nothing is being heard.
    mutating func stopped(at now: ContinuousClock.Instant) -> [Action] {
        let actions = observe(playing: false, at: now)
        listening = nil
        return actions
    }
}

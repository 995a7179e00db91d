/// The one owner of what the pipeline is doing: status, the position basis, seeks (pending, in flight, at start),
/// seekability, gapless hand-over and the drain after a failed one.
///
/// A plain value with no I/O: inputs (commands, decoded bus messages, about-to-finish, timer ticks) go in, effects
/// (set state, seek, set URI, post a marker, emit an event) come out. `PipelineShell` feeds it from GStreamer's
/// threads and performs what it returns; the tests drive it with tables.
///
/// Its state is a `State` whose cases carry their own data (`PlaybackMachine+State.swift`): a seek in flight, a
/// hand-over or a drain exists only inside the state where it can happen, so an impossible mix cannot be stored.
/// Every change goes through `handle`.
///
/// Ordering: a load or a stop starts a new generation and posts a marker carrying it on the bus; bus messages are
/// ignored until that marker has come through (`busGeneration == generation`), so a stale EOS or error from a
/// replaced item is never taken for the new one.
public struct PlaybackMachine: Sendable {
    /// The states a pipeline can be asked for or be in.
    public enum PipelineState: Sendable, Equatable {
        case null, ready, paused, playing
    }

    /// Something that happened: a command, a decoded bus message, a result of an effect, or a timer tick.
    public enum Input: Sendable, Equatable {
        /// Replace whatever plays; `reload` re-opens the current item (no second `.started`, tags kept).
        case load(PlaybackItem, paused: Bool, at: Int64, reload: Bool = false, now: ContinuousClock.Instant)
        case play(now: ContinuousClock.Instant)
        case pause(now: ContinuousClock.Instant)
        case stop
        /// The shell took the pipeline through NULL and swapped its sink (another output): re-open the item where it
        /// was (`at`, ns), held paused when `paused`, else as it was; with nothing under way, just READY again.
        case reopen(at: Int64, paused: Bool?, now: ContinuousClock.Instant)
        /// Absolute position in ns.
        case seek(Int64, now: ContinuousClock.Instant)
        /// `position`: where the pipeline is now (ns), the point a rate change seeks to.
        case setRate(Double, position: Int64?, now: ContinuousClock.Instant)
        /// The `.reset` effect is done: the pipeline is READY with no streaming thread left.
        case resetDone
        /// about-to-finish (a streaming thread) hands `next` over after the item `finishingItem()` named for
        /// generation `generation`; dropped if anything changed since.
        case handOver(PlaybackItem, generation: UInt64)
        /// about-to-finish found `next` unplayable (a missing file) before handing it over: the current item ends
        /// normally and `next` is reported failed.
        case refuse(PlaybackItem, PlaybackError, generation: UInt64)
        /// The `.seek` effect returned (false: GStreamer refused it).
        case seekIssued(Bool)
        /// Our own marker message came through the bus.
        case marker(UInt64, stopped: Bool)
        /// Our own "next item refused" message came through the bus.
        case rejectedMarker(UInt64)
        /// Our marker posted just before seek `serial` came through the bus: an ASYNC_DONE from now on is that
        /// seek's (or a later one's), never an earlier one's.
        case seekMarker(UInt64)
        /// playbin settled in `state`, its target (transitions on the way are not passed in), at `position` (ns).
        case settled(PipelineState, position: Int64? = nil)
        /// ASYNC_DONE, with what the shell read from the pipeline right then.
        case asyncDone(position: Int64?, duration: Int64?, seekable: Bool?, settled: PipelineState?)
        /// STREAM_START with playbin's group id, and what the shell read from the pipeline right then.
        case streamStart(group: UInt32?, duration: Int64?, seekable: Bool?, now: ContinuousClock.Instant = .now)
        case durationChanged(Int64?)
        case tags(StreamTags)
        case endOfStream
        case error(PlaybackError, now: ContinuousClock.Instant)
        case buffering(percent: Int)
        /// Any message of the pipeline came through the bus (an element changed state, a stream started, tags): it is
        /// working, however slowly, so a preroll's deadline moves on.
        case progress(now: ContinuousClock.Instant)
        /// Runs after every bus pop (a message or a time-out): deadlines and progress watches.
        /// `playing`: playbin is in PLAYING and heading nowhere else.
        case tick(now: ContinuousClock.Instant, position: Int64?, playing: Bool = false)
        /// What playbin is in and heading for, read by the shell at least once a second.
        case stateCheck(current: PipelineState, target: PipelineState, now: ContinuousClock.Instant)
    }

    /// What the shell does for the machine, in order.
    public enum Effect: Sendable, Equatable {
        /// NULL first when `fully` (after an error playbin keeps a broken source group), then READY. Answer `.resetDone`.
        case reset(fully: Bool)
        /// Post our marker for `generation` on the bus (`stopped`: report `.stopped` when it comes through).
        case postMarker(UInt64, stopped: Bool)
        /// Post "next items refused" for `generation`.
        case postRejected(UInt64)
        case setURI(String)
        case setState(PipelineState)
        /// Post our seek marker `serial` on the bus, then make a flushing, accurate seek; answer `.seekIssued`.
        case seek(Int64, rate: Double, serial: UInt64)
        case emit(PlaybackEvent)
        /// Wake the bus thread (it watches a hand-over from now on).
        case wake
        /// A line for the debug log.
        case log(String)
    }

    /// What a command did: its effects, and whether it was taken (a seek on an unseekable track is not).
    public struct Step: Sendable, Equatable {
        public var effects: [Effect] = []
        public var accepted = true
    }

    /// What the player reads: the status it promised clients, the position basis and seekability.
    public struct Snapshot: Sendable, Equatable {
        /// The item played or held paused; nil when stopped.
        public var item: PlaybackItem?
        public var status: PlaybackState = .stopped
        public var canSeek = false
        public var rate = 1.0
        /// A position to report instead of the pipeline's (a seek or a start at a position not settled yet), ns.
        public var positionOverride: Int64?
        /// When the item began after a gapless hand-over (nil after a load or a seek): until the sink renders it, the
        /// pipeline can still report the previous item's position.
        public var handedOverAt: ContinuousClock.Instant?
        /// The load or stop this snapshot belongs to (a new one at each, also when the same item is loaded again): a
        /// position read for one generation never stands for another.
        public var generation: UInt64 = 0
        /// A load from the start still prerolling: nothing of it was played, so its position is 0 whatever the
        /// pipeline last answered (a Previous or a seek to 0 re-opens the same item).
        public var prerollingFromStart = false
    }

    /// How long a preroll may go without any sign of progress from the pipeline before the item fails: a stalled
    /// source or a truncated file that hangs playbin. Counted from the last sign, not from the load, so a machine
    /// slowed down by load (a synth reading its SoundFont, plugins loaded for the first time) is not mistaken for one.
    public let prerollTimeout: Duration
    /// The longest a preroll may take, progress or not.
    public var prerollCeiling: Duration { prerollTimeout * 6 }

    /// What the pipeline is doing, with what that state needs to know.
    private(set) var state = State.idle
    // Generations (see the type's comment).
    private(set) var generation: UInt64 = 0
    private(set) var busGeneration: UInt64 = 0
    /// Seeks issued, and the serial of the last seek whose marker came through the bus: only an ASYNC_DONE popped
    /// after a seek's marker settles it (an earlier seek's, popped late on a loaded machine, would clear the target
    /// while the pipeline still flushes and answers positions from the old running time).
    private(set) var seekSerial: UInt64 = 0
    private var seekSerialSeen: UInt64 = 0

    /// The item played, held, finished or failed; kept after a stop so that play starts it again.
    private(set) var item: PlaybackItem?
    /// What clients were told: the state the pipeline is brought to as soon as it can be.
    public private(set) var status = PlaybackState.stopped
    private(set) var rate = 1.0
    /// What the pipeline has shown of the current item's stream.
    private(set) var media = Media()
    /// From a `.reset` effect until `.resetDone`: the old item's about-to-finish must not hand over meanwhile.
    private(set) var awaitingReset = false
    /// Next items refused before the hand-over (a missing file), in order, to report as failed.
    private var rejected: [Rejection] = []
    private var reported: PlaybackState? = .stopped
    /// An error happened since the last NULL: the next reset goes through NULL.
    private var dirty = false

    public init(prerollTimeout: Duration = .seconds(10)) {
        self.prerollTimeout = prerollTimeout
    }

    // MARK: - Reading

    public var snapshot: Snapshot {
        var s = Snapshot()
        s.status = status
        s.rate = rate
        guard status != .stopped, let item else { return s }
        s.item = item
        s.canSeek = item.knownSeekable || media.seekable == true
        s.positionOverride = state.positionOverride
        s.handedOverAt = media.handedOverAt
        s.generation = generation
        if case .prerolling = state, s.positionOverride == nil { s.prerollingFromStart = true }
        return s
    }

    /// `snapshot.item`'s token, without building the snapshot.
    public var itemToken: UInt64? { status == .stopped ? nil : item?.token }
    /// The item last started (or loaded), kept after a stop so that play starts it again.
    public var currentItem: PlaybackItem? { item }
    /// The pipeline state last reported by `.stateChanged`.
    public var reportedState: PlaybackState { reported ?? .stopped }
    /// Whether an item is opening: its deadline moves on with each sign of progress (`.progress`).
    public var isPrerolling: Bool {
        if case .prerolling = state { return true }
        return false
    }

    /// Whether the bus thread's once-a-second state check can find anything: only a running item can sit stuck, so a
    /// stopped or finished daemon does not touch the pipeline for it.
    public var checksState: Bool { state.running != nil }

    /// Whether the bus thread should wake often: a deadline or a hand-over is being watched.
    public var isWatching: Bool {
        if isPrerolling { return true }
        // A landed seek is watched only while it should play on: held paused, the daemon stays idle.
        return (state.hasLanded && status == .playing) || state.handOver.map { $0 != .clear } ?? false
    }

    /// The item about to end and the generation it belongs to, or nil when no hand-over may be made now: a reset or
    /// a seek is decided or under way (a hand-over made before a flushing seek went through would play the next item
    /// from the seek position; about-to-finish fires again once the item drains after the seek).
    public func finishingItem() -> (PlaybackItem, UInt64)? {
        guard mayHandOver, let finishing = state.handOver?.pending.last ?? item else { return nil }
        return (finishing, generation)
    }

    private var mayHandOver: Bool {
        guard !awaitingReset else { return false }
        switch state {
        case .prerolling(let preroll): return preroll.startSeek == nil
        case .running(let running): return !running.seek.isIssuing
        case .idle, .finished: return false
        }
    }

    // MARK: - Inputs

    public mutating func handle(_ input: Input) -> Step {
        if let impossible = impossibility(of: input) {
            #if DEBUG
            preconditionFailure("PlaybackMachine in \(state): \(impossible)")
            #else
            return Step(effects: [.log("ignored in \(state): \(impossible)")], accepted: false)
            #endif
        }
        switch input {
        case .load(let item, let paused, let position, let reload, let now):
            return Step(effects: load(item, paused: paused, at: position, reload: reload, now: now))
        case .play(let now): return resume(.playing, now: now)
        case .pause(let now): return resume(.paused, now: now)
        case .stop: return Step(effects: stop())
        case .reopen(let position, let paused, let now): return Step(effects: reopen(at: position, paused: paused, now: now))
        case .seek(let position, let now): return seek(to: position, now: now)
        case .setRate(let rate, let position, let now): return setRate(rate, position: position, now: now)
        case .resetDone:
            awaitingReset = false
            return Step()
        case .seekIssued(let ok): return Step(effects: seekIssued(ok), accepted: ok)
        case .handOver(let next, let gen): return Step(effects: handOver(next, generation: gen))
        case .refuse(let next, let error, let gen): return Step(effects: refuse(next, error, generation: gen))
        case .marker(let gen, let stopped):
            busGeneration = gen
            guard stopped, gen == generation else { return Step() }
            return Step(effects: report(.stopped))
        case .seekMarker(let serial):
            seekSerialSeen = max(seekSerialSeen, serial)
            return Step()
        case .rejectedMarker(let gen):
            guard gen == generation, busGeneration == generation else { return Step() }
            let refused = rejected
            rejected = []
            return Step(effects: refused.flatMap { r in
                [.log("next item \(r.item) refused before hand-over: \(r.error)"), .emit(.failed(r.item, r.error))]
            })
        default:
            // Everything else comes from the pipeline: drop what was posted before the current marker.
            guard busGeneration == generation else { return Step() }
            return Step(effects: pipelineMessage(input))
        }
    }

    /// Why `input` cannot come in the present state, or nil. The shell answers a `.reset` and a `.seek` effect at
    /// once, under its command lock; an answer nothing asked for means the shell and the machine disagree.
    func impossibility(of input: Input) -> String? {
        switch input {
        case .seekIssued:
            if case .running(let running) = state, running.seek.isIssuing { return nil }
            return "a seek's answer with no seek being issued"
        case .resetDone:
            return awaitingReset ? nil : "a reset's answer with no reset asked for"
        default:
            return nil
        }
    }

    private mutating func pipelineMessage(_ input: Input) -> [Effect] {
        switch input {
        case .settled(let settled, let position):
            guard !state.seekUnderWay, !state.isBuffering else { return [] }
            let landed = state.hasLanded
            if let again = seekAgainIfLandedAway(settled, position: position) { return again }
            return reportLeavingLanded(landed, settled)
        case .asyncDone(let position, let duration, let seekable, let settled):
            return asyncDone(position: position, duration: duration, seekable: seekable, settled: settled)
        case .streamStart(let group, let duration, let seekable, let now):
            return streamStart(group: group, duration: duration, seekable: seekable, now: now)
        case .durationChanged(let duration):
            return durationEvents(duration)
        case .tags(let new):
            guard let item else { return [] }
            let merged = media.tags.merging(new)
            guard merged != media.tags else { return [] }
            media.tags = merged
            return [.emit(.tags(item, merged))]
        case .endOfStream:
            guard let item, let handOver = state.handOver else { return [] }
            // The end with a hand-over still pending: the next item's source group may be broken (its error can
            // come later, from an older generation); the next reset goes through NULL.
            if !handOver.pending.isEmpty { dirty = true }
            state = .finished
            return [.log("finished (EOS)"), .emit(.finished(item))]
        case .error(let error, let now):
            return failed(error, now: now)
        case .buffering(let percent):
            return buffering(percent)
        case .progress(let now):
            if case .prerolling(var preroll) = state {
                preroll.deadline = max(preroll.deadline, min(now.advanced(by: prerollTimeout), preroll.began.advanced(by: prerollCeiling)))
                state = .prerolling(preroll)
            }
            return []
        case .tick(let now, let position, let playing):
            return playingAgain(playing) + tick(now: now, position: position)
        case .stateCheck(let current, let target, let now):
            return stateCheck(current: current, target: target, now: now)
        default:
            return []
        }
    }

    // MARK: - Commands

    private mutating func load(_ new: PlaybackItem, paused: Bool, at position: Int64, reload: Bool,
                               now: ContinuousClock.Instant) -> [Effect] {
        let fully = dirty
        dirty = false
        generation += 1
        let kept = media
        item = new
        rejected = []
        media = Media(seekable: new.knownSeekable ? true : nil)
        if reload {
            // The same item again (another output, a seek over a prepared hand-over): no second `.started`.
            media.tags = kept.tags
            media.lastDuration = kept.lastDuration
            media.silentStart = true
        }
        status = paused ? .paused : .playing
        let position = max(0, position)
        let seekAtStart = position > 0 || rate != 1
        let startSeek = seekAtStart
            ? StartSeek(position: position, target: position > 0 ? position : nil, reports: reload || position > 0) : nil
        state = .prerolling(Preroll(began: now, deadline: now.advanced(by: prerollTimeout), startSeek: startSeek))
        return [reset(fully: fully), .postMarker(generation, stopped: false), .setURI(new.uri),
                .setState(paused || seekAtStart ? .paused : .playing)]
    }

    private mutating func resume(_ target: PlaybackState, now: ContinuousClock.Instant) -> Step {
        guard let item else { return Step(accepted: false) }
        switch state {
        case .idle, .finished:
            // Stopped, failed or at the end: start the item again from the beginning.
            return Step(effects: load(item, paused: target == .paused, at: 0, reload: false, now: now))
        case .prerolling(let preroll):
            status = target
            // Pausing is always safe; playing waits for a start seek still to make.
            if target == .paused || preroll.startSeek == nil { return Step(effects: [.setState(target == .paused ? .paused : .playing)]) }
            return Step()
        case .running(var running):
            if target == .paused, status == .playing, var flight = running.seek.flight, !flight.atStart {
                flight.pausedDuring = true
                running.seek = running.seek.with(flight)
                state = .running(running)
            }
            status = target
            if target == .paused { return Step(effects: [.setState(.paused)]) }
            // Playing waits for a start seek to settle, and for the buffer.
            if running.seek.flight?.atStart == true || running.buffering { return Step() }
            return Step(effects: [.setState(.playing)])
        }
    }

    private mutating func stop() -> [Effect] {
        let fully = dirty
        dirty = false
        generation += 1
        rejected = []
        media = Media(seekable: media.seekable)
        state = .idle
        status = .stopped
        return [reset(fully: fully), .postMarker(generation, stopped: true)]
    }

    private mutating func reopen(at position: Int64, paused: Bool?, now: ContinuousClock.Instant) -> [Effect] {
        // The shell went through NULL itself: no broken source group is left to clear.
        dirty = false
        guard let item, status != .stopped, state.handOver != nil else {
            // Stopped, failed or at the end: the next load or play opens the item on the new sink.
            return [reset(fully: false)]
        }
        let holdPaused = paused ?? (status == .paused)
        return [.log("output changed: re-opening \(item) at \(position) ns")]
            + load(item, paused: holdPaused, at: position, reload: true, now: now)
    }

    private mutating func seek(to requested: Int64, now: ContinuousClock.Instant) -> Step {
        let position = max(0, requested)
        guard let item, status != .stopped else { return Step(accepted: false) }
        if media.seekable == false, !item.knownSeekable { return Step(accepted: false) }
        switch state {
        case .idle:
            return Step(accepted: false)
        case .prerolling(var preroll):
            // Applied once the item has prerolled; held in PAUSED until then, so nothing is heard from the old position.
            preroll.startSeek = StartSeek(position: position, target: position, reports: true)
            state = .prerolling(preroll)
            return Step(effects: [.setState(.paused)])
        case .running(var running):
            if let flight = running.seek.flight, flight.atStart {
                // The start seek has not settled: seek again on top of it, and keep the state for after it.
                let (next, effect) = newFlight(position, target: position, reports: true, atStart: true)
                running.seek = .issuing(next)
                state = .running(running)
                return Step(effects: [effect])
            }
            if !running.handOver.pending.isEmpty {
                // A flushing seek after a hand-over was prepared would jump into the next item in playbin: re-open
                // the current item at the position instead; about-to-finish asks for the next one again.
                return Step(effects: [.log("seek with a hand-over prepared: re-opening \(item) at \(position) ns")]
                            + load(item, paused: status != .playing, at: position, reload: true, now: now))
            }
            return Step(effects: issueSeek(position, silent: false))
        case .finished:
            // Seeking back after the end plays again.
            return Step(effects: issueSeek(position, silent: false))
        }
    }

    /// A seek from `.running` or `.finished` (which it leaves: seeking back after EOS plays again). It takes over the
    /// part of a start seek still in flight: the pipeline held in PAUSED for that one plays once this one settles (a
    /// start seek past the end of a short file ends it at once, and the next stream's rate is carried over by a seek).
    private mutating func issueSeek(_ position: Int64, silent: Bool) -> [Effect] {
        var running = state.running ?? Running()
        let (flight, effect) = newFlight(position, target: silent ? nil : position, reports: !silent,
                                         atStart: running.seek.flight?.atStart ?? false,
                                         pausedDuring: running.seek.flight?.pausedDuring ?? false)
        running.seek = .issuing(flight)
        state = .running(running)
        return [effect]
    }

    /// A seek with the next serial, and its effect.
    private mutating func newFlight(_ position: Int64, target: Int64?, reports: Bool, atStart: Bool,
                                    pausedDuring: Bool = false) -> (Flight, Effect) {
        seekSerial += 1
        // A seek of one's own moves away from where the hand-over began (the rate carried over it does not).
        if reports || target != nil { media.handedOverAt = nil }
        let flight = Flight(position: position, serial: seekSerial, target: target, reports: reports, atStart: atStart,
                            pausedDuring: pausedDuring)
        return (flight, .seek(position, rate: rate, serial: seekSerial))
    }

    private mutating func setRate(_ requested: Double, position: Int64?, now: ContinuousClock.Instant) -> Step {
        guard requested.isFinite else { return Step(accepted: false) }
        rate = min(4, max(0.25, requested))
        guard let item else { return Step() }
        switch state {
        case .idle:
            return Step() // applies at the next load
        case .prerolling(var preroll):
            if preroll.startSeek == nil { preroll.startSeek = StartSeek(position: 0, target: nil, reports: false) }
            state = .prerolling(preroll)
            return Step()
        case .running, .finished:
            guard status != .stopped else { return Step() }
            var at = state.positionOverride ?? position ?? 0
            // A seek that landed before PLAYING came back: the pipeline has not moved from its target, and its own
            // position can be the faulty one `asyncDone` describes (a stress run read 0.3 s after a seek to 10.6 s).
            if case .landed(let target)? = state.running?.seek { at = target }
            if var running = state.running {
                if !running.handOver.pending.isEmpty {
                    return Step(effects: load(item, paused: status != .playing, at: at, reload: true, now: now))
                }
                if let flight = running.seek.flight, flight.atStart {
                    let (next, effect) = newFlight(at, target: flight.target, reports: flight.reports, atStart: true)
                    running.seek = .issuing(next)
                    state = .running(running)
                    return Step(effects: [effect])
                }
            }
            return Step(effects: [.log("rate \(rate) from \(at) ns")] + issueSeek(at, silent: false))
        }
    }

    private mutating func seekIssued(_ ok: Bool) -> [Effect] {
        guard var running = state.running, case .issuing(let flight) = running.seek else { return [] }
        if ok {
            running.seek = .inFlight(flight)
            state = .running(running)
            return []
        }
        running.seek = .none
        state = .running(running)
        guard flight.atStart else { return [.log("seek refused")] }
        // Unseekable after all (a stream): start from the beginning instead.
        media.seekable = false
        return [.log("start seek refused; starting at 0")] + stateAfterStartSeek(running)
    }

    private func stateAfterStartSeek(_ running: Running) -> [Effect] {
        status == .playing && !running.buffering ? [.setState(.playing)] : []
    }

    // MARK: - about-to-finish (a streaming thread, under the machine's own lock only)

    private mutating func handOver(_ next: PlaybackItem, generation gen: UInt64) -> [Effect] {
        guard gen == generation, mayHandOver, var handOver = state.handOver else { return [] }
        switch handOver {
        case .clear: handOver = .pending([next], watch: nil)
        case .pending(let items, let watch): handOver = .pending(items + [next], watch: watch)
        case .draining: return [] // the current item ends after a failed hand-over: nothing more joins it
        }
        state.handOver = handOver
        return [.log("gapless hand-over → \(next)"), .setURI(next.uri), .wake]
    }

    private mutating func refuse(_ next: PlaybackItem, _ error: PlaybackError, generation gen: UInt64) -> [Effect] {
        guard gen == generation, !awaitingReset else { return [] }
        if let index = rejected.firstIndex(where: { $0.item == next }) {
            rejected[index].error = error
        } else {
            rejected.append(Rejection(item: next, error: error))
        }
        return [.postRejected(gen)]
    }

    // MARK: - Bus messages

    private mutating func asyncDone(position: Int64?, duration: Int64?, seekable known: Bool?,
                                    settled: PipelineState?) -> [Effect] {
        var effects: [Effect] = []
        switch state {
        case .prerolling(let preroll):
            var running = Running(handOver: preroll.handOver)
            if let known, media.seekable != true { media.seekable = known }
            if let start = preroll.startSeek {
                let (flight, effect) = newFlight(start.position, target: start.target, reports: start.reports, atStart: true)
                running.seek = .issuing(flight)
                state = .running(running)
                return [effect] + durationEvents(duration)
            }
            state = .running(running)
        case .running(var running):
            if case .inFlight(let flight) = running.seek, seekSerialSeen >= flight.serial {
                if let reason = repeatReason(flight, position: position, settled: settled) {
                    // GStreamer 1.22: a pipeline set to PAUSED around a flushing seek (while one made in PLAYING is
                    // under way, or while a Play and a Pause are still being carried out) can keep the running time it
                    // had played before the seek. Paused, it reports the target plus that time (30.9 s for a seek to
                    // 30 s after 0.9 s of playing); resumed, it renders the first buffers that much late. A flushing
                    // seek made in PAUSED sets the running time right, so the seek is made again before it counts as
                    // settled: the target stays what Position reads, and `.seekCompleted` comes once, after it.
                    var (again, effect) = newFlight(flight.position, target: flight.target, reports: flight.reports,
                                                    atStart: flight.atStart)
                    again.repeated = true
                    running.seek = .issuing(again)
                    state = .running(running)
                    return [.log("\(reason): seeking again to \(flight.position) ns"), effect] + durationEvents(duration)
                }
                // Settled. Until the pipeline is back in PLAYING a pause can still meet the fault above.
                running.seek = settled == .playing || flight.repeated ? .none : .landed(target: flight.position)
                state = .running(running)
                if flight.atStart { effects += stateAfterStartSeek(running) }
                if known == true { media.seekable = true }
                if let item, flight.reports { effects.append(.emit(.seekCompleted(item, position ?? 0))) }
            } else if !running.seek.isUnderWay, !running.buffering, let settled {
                let landed = state.hasLanded
                if let again = seekAgainIfLandedAway(settled, position: position) { return again + durationEvents(duration) }
                if landed, !state.hasLanded { return durationEvents(duration) + reportLeavingLanded(true, settled) }
            }
        case .idle, .finished:
            break
        }
        effects += durationEvents(duration)
        // A settled pipeline whose state is its target: report it (once).
        if let settled, state.running != nil, !state.seekUnderWay, !state.isBuffering, effects.allSatisfy({ !$0.isSetState }) {
            effects += report(Self.playbackState(settled))
        }
        return effects
    }

    /// A landed seek's watch also ends when playbin is seen in PLAYING: a state message is not always there to say
    /// so (seeks on top of each other), and Position must not stay at the target while the music plays on.
    private mutating func playingAgain(_ playing: Bool) -> [Effect] {
        guard playing, state.hasLanded, var running = state.running, let item else { return [] }
        running.seek = .none
        state = .running(running)
        return [.emit(.playingOn(item))]
    }

    /// Why the seek that just settled is to be made again (see `asyncDone`), or nil.
    private func repeatReason(_ flight: Flight, position: Int64?, settled: PipelineState?) -> String? {
        guard !flight.repeated else { return nil }
        if flight.pausedDuring { return "paused while seeking" }
        if settled == .paused, let position, abs(position - flight.position) > 100_000_000 {
            return "paused at \(position) ns after a seek"
        }
        return nil
    }

    /// A pause that came just after a seek settled, before the pipeline was back in PLAYING, meets the same GStreamer
    /// fault as one during the seek (see `asyncDone`): settled paused away from where the seek went, the seek is made
    /// again, silently (its `.seekCompleted` was sent), and `.paused` is reported once it lands. Any settled PLAYING
    /// ends the watch.
    private mutating func seekAgainIfLandedAway(_ settled: PipelineState, position: Int64?) -> [Effect]? {
        guard var running = state.running, case .landed(let target) = running.seek,
              settled != .ready, settled != .null else { return nil }
        guard settled == .paused, status == .paused else {
            running.seek = .none
            state = .running(running)
            return nil
        }
        guard let position, abs(position - target) > 100_000_000 else { return nil }
        var (again, effect) = newFlight(target, target: target, reports: false, atStart: false)
        again.repeated = true
        running.seek = .issuing(again)
        state = .running(running)
        return [.log("paused at \(position) ns before playing after a seek: seeking again to \(target) ns"), effect]
    }

    private mutating func streamStart(group: UInt32?, duration: Int64?, seekable known: Bool?,
                                      now: ContinuousClock.Instant) -> [Effect] {
        if !media.started, let item {
            media.started = true
            media.group = group
            if known == true { media.seekable = true }
            if media.silentStart {
                media.silentStart = false
                return []
            }
            return [.log("started \(item)"), .emit(.started(item))] + durationEvents(duration)
        }
        // A flushing seek makes the sink see the same stream-start again (same group id): not a new item.
        if let group, group == media.group { return [] }
        if group == nil, state.running?.seek.isUnderWay == true { return [] }
        guard case .pending(var items, _)? = state.handOver, !items.isEmpty else { return [] }
        let next = items.removeFirst()
        state.handOver = items.isEmpty ? .clear : .pending(items, watch: nil)
        if var running = state.running {
            // Nothing of a seek in the item that ended reads for the new one.
            if var flight = running.seek.flight {
                flight.target = nil
                running.seek = running.seek.with(flight)
            } else {
                running.seek = .none
            }
            state = .running(running)
        }
        item = next
        media.handedOverAt = now
        media.group = group
        media.tags = StreamTags()
        media.lastDuration = nil
        media.seekable = next.knownSeekable ? true : known
        var effects: [Effect] = [.log("started \(next)"), .emit(.started(next))] + durationEvents(duration)
        if rate != 1, state.running != nil {
            // playbin starts every new stream at rate 1: carry the rate over.
            effects += issueSeek(0, silent: true)
        }
        return effects
    }

    private mutating func failed(_ error: PlaybackError, now: ContinuousClock.Instant) -> [Effect] {
        dirty = true
        guard let item, let handOver = state.handOver else { return [.log("ignored error: \(error)")] }
        switch handOver {
        case .draining:
            return [.log("ignored error: \(error)")] // more errors from the refused next item
        case .pending(let items, _) where !items.isEmpty:
            state.handOver = .draining(Progress(lastAdvance: now, duration: media.lastDuration ?? nil))
            return [.log("next item \(items[0]) failed during gapless hand-over (\(error)); letting the current item finish"),
                    .emit(.failed(items[0], error))]
        case .clear, .pending:
            return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure(to: .idle)
        }
    }

    /// After a failure or a stalled drain: NULL (READY is not enough after an error), a new generation, no state
    /// event. The player loads what comes next or stops.
    private mutating func resetAfterFailure(to next: State) -> [Effect] {
        state = next
        generation += 1
        dirty = false
        return [reset(fully: true), .postMarker(generation, stopped: false)]
    }

    private mutating func buffering(_ percent: Int) -> [Effect] {
        var effects: [Effect] = []
        let level = min(100, max(0, percent))
        if let item, level != media.bufferingLevel {
            media.bufferingLevel = level
            effects.append(.emit(.buffering(item, level)))
        }
        guard var running = state.running else { return effects }
        if level < 100, !running.buffering, status == .playing {
            running.buffering = true
            state = .running(running)
            return effects + [.setState(.paused)]
        }
        if level >= 100, running.buffering {
            running.buffering = false
            state = .running(running)
            return effects + (status == .playing ? [.setState(.playing)] : [])
        }
        return effects
    }

    /// Playing promises a pipeline that plays. After a network stream prerolled, playbin was seen (about one start in
    /// four of an Icecast stream) to commit PAUSED, announce that it goes on to PLAYING, and never get there: the
    /// status said Playing while the position held at 0, and playbin stayed "busy" going to PLAYING, so that asking
    /// again changed nothing. A local file did the same after a Pause and a Play in its first moments, and a seek over
    /// a prepared hand-over of a truncated file left playbin in PAUSED with PAUSED as its target. Sitting in PAUSED
    /// while nothing else explains it (a preroll, a seek, buffering) gets one nudge (PAUSED, then PLAYING): at once
    /// when PAUSED is playbin's own target (nothing is under way that could still bring it to PLAYING), after a
    /// second when it says it is on its way; three seconds on and the item fails, as a stalled one does: the player
    /// reconnects a live stream and moves on from anything else, and the status never lies.
    private mutating func stateCheck(current: PipelineState, target: PipelineState, now: ContinuousClock.Instant) -> [Effect] {
        guard var running = state.running else { return [] }
        let shouldPlay = status == .playing && !running.buffering && !running.seek.isUnderWay
        guard shouldPlay, current == .paused, let item else {
            running.stuck = nil
            state = .running(running)
            return []
        }
        var stuck = running.stuck ?? Stuck(since: now)
        let nudge = !stuck.nudged && (target != .playing || now - stuck.since >= Self.stuckNudgeAfter)
        stuck.nudged = stuck.nudged || nudge
        running.stuck = stuck
        state = .running(running)
        if nudge {
            return [.log("playbin sat in PAUSED (heading for \(target)) while playing: setting PAUSED, then PLAYING"),
                    .setState(.paused), .setState(.playing)]
        }
        guard stuck.nudged, now - stuck.since >= .seconds(3) else { return [] }
        let error = PlaybackError(domain: "stream", code: 1, message: "The pipeline stopped before playing and would not start.")
        return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure(to: .idle)
    }

    /// How long playbin may sit in PAUSED on its way to PLAYING while playing before it is nudged: far longer than a
    /// prerolled pipeline takes to start, even on a loaded machine. Not shorter: the nudge's PAUSED waits for the
    /// sink's render, which a slow reader (snapserver's FIFO on a loaded machine) can hold up.
    static let stuckNudgeAfter = Duration.seconds(1)

    /// How long a hand-over may go without the position moving before the next item is given up on.
    static let stalledHandOverLimit = Duration.seconds(8)

    private mutating func tick(now: ContinuousClock.Instant, position: Int64?) -> [Effect] {
        if case .prerolling(let preroll) = state, now >= preroll.deadline, let item {
            let error = PlaybackError.timedOut(prerollTimeout)
            return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure(to: .idle)
        }
        guard let item, let handOver = state.handOver else { return [] }
        switch handOver {
        case .clear:
            return []
        case .pending(let items, let watch):
            // A hand-over that neither starts nor fails (a truncated file can stall playbin with no error): watch it
            // like a failed one, while nothing else (a seek, the buffer) explains a wait.
            guard state.running?.seek.isUnderWay != true, !state.isBuffering else {
                state.handOver = .pending(items, watch: nil)
                return []
            }
            var progress = watch ?? Progress(lastAdvance: now, duration: media.lastDuration ?? nil)
            progress.observe(position, at: now, advancing: status == .playing)
            state.handOver = .pending(items, watch: progress)
            // Normal gapless playback keeps the position moving until STREAM_START. A loaded machine can take a while
            // to start the next item (FluidSynth loading its SoundFont beside a busy test suite took more than 3 s),
            // and giving up resets the pipeline while playbin may be setting it up (a READY against its pad-added can
            // deadlock GStreamer 1.22).
            guard status == .playing, now - progress.lastAdvance > Self.stalledHandOverLimit else { return [] }
            var effects: [Effect] = []
            if let stuck = items.first {
                effects += [.log("next item \(stuck) never started after the hand-over; giving up on it"),
                            .emit(.failed(stuck, PlaybackError(domain: "stream", code: 1, message: "The stream stalled before it started.")))]
            }
            return effects + [.log("finished \(item) after a stalled hand-over"), .emit(.finished(item))]
                + resetAfterFailure(to: .finished)
        case .draining(var progress):
            let playing = status == .playing && !state.isBuffering
            progress.observe(position, at: now, advancing: playing)
            state.handOver = .draining(progress)
            guard playing else { return [] }
            let atEnd = position != nil && progress.duration != nil && position! >= progress.duration! - 20_000_000
            let stalled = now - progress.lastAdvance > .milliseconds(1500)
            guard atEnd || stalled else { return [] }
            return [.log("finished \(item) after a failed hand-over"), .emit(.finished(item))] + resetAfterFailure(to: .finished)
        }
    }

    // MARK: - Helpers

    /// A `.reset` effect; no hand-over until it is done.
    private mutating func reset(fully: Bool) -> Effect {
        awaitingReset = true
        return .reset(fully: fully)
    }

    private mutating func durationEvents(_ duration: Int64?) -> [Effect] {
        guard let item, media.started, state.handOver.map({ $0 == .clear }) ?? true else { return [] }
        if let last = media.lastDuration, last == duration { return [] }
        media.lastDuration = .some(duration)
        return [.emit(.durationChanged(item, duration))]
    }

    /// The state's event, and `.playingOn` when a landed seek's position override just ended, so that readers of
    /// the position take the pipeline's own from now on.
    private mutating func reportLeavingLanded(_ wasLanded: Bool, _ settled: PipelineState) -> [Effect] {
        let effects = report(Self.playbackState(settled))
        guard wasLanded, !state.hasLanded, let item else { return effects }
        return effects + [.emit(.playingOn(item))]
    }

    /// The event for a newly reached state, or nothing when it was already reported.
    private mutating func report(_ state: PlaybackState) -> [Effect] {
        guard reported != state else { return [] }
        reported = state
        return [.emit(.stateChanged(state))]
    }

    static func playbackState(_ state: PipelineState) -> PlaybackState {
        switch state {
        case .playing: return .playing
        case .paused: return .paused
        case .null, .ready: return .stopped
        }
    }
}

extension PlaybackMachine.Effect {
    var isSetState: Bool {
        if case .setState = self { return true }
        return false
    }
}

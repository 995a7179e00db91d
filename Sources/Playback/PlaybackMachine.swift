/// The one owner of what the pipeline is doing: status, the position basis, seeks (pending, in flight, at start),
/// seekability, gapless hand-over and the drain after a failed one.
///
/// A plain value with no I/O: inputs (commands, decoded bus messages, about-to-finish, timer ticks) go in, effects
/// (set state, seek, set URI, post a marker, emit an event) come out. `PipelineShell` feeds it from GStreamer's
/// threads and performs what it returns; the tests drive it with tables.
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
        case streamStart(group: UInt32?, duration: Int64?, seekable: Bool?)
        case durationChanged(Int64?)
        case tags(StreamTags)
        case endOfStream
        case error(PlaybackError, now: ContinuousClock.Instant)
        case buffering(percent: Int)
        /// Runs after every bus pop (a message or a time-out): deadlines and progress watches.
        case tick(now: ContinuousClock.Instant, position: Int64?)
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
    }

    enum Phase: Equatable {
        /// Nothing loaded, stopped, or the current item failed.
        case idle
        /// Waiting for the first preroll (ASYNC_DONE) before the deadline.
        case prerolling(deadline: ContinuousClock.Instant)
        case running
        /// EOS reached (or a stalled drain ended): waiting for load/stop.
        case finished
    }

    /// Progress watch of the current item once a hand-over failed or is pending.
    struct Drain: Equatable {
        var lastPosition: Int64?
        var lastAdvance: ContinuousClock.Instant
        /// The current item's duration before the hand-over: a query now may answer for the next item.
        var duration: Int64?
    }

    public let prerollTimeout: Duration

    // Generations (see the type's comment).
    private(set) var generation: UInt64 = 0
    private(set) var busGeneration: UInt64 = 0

    private(set) var item: PlaybackItem?
    /// What clients were told: the state the pipeline is brought to as soon as it can be.
    private(set) var status = PlaybackState.stopped
    private(set) var phase = Phase.idle
    private(set) var rate = 1.0
    /// nil until known; once seekable, an item stays so (a query can fail while the pipeline is busy).
    private(set) var seekable: Bool?

    /// Items handed over in about-to-finish that have not started yet (oldest first).
    private(set) var pending: [PlaybackItem] = []
    /// Next items refused before the hand-over (missing file), to report as failed.
    private var rejected: [PlaybackItem: PlaybackError] = [:]
    private var rejectedOrder: [PlaybackItem] = []
    /// False from a load's decision until its reset is done: about-to-finish of the old item must not hand over.
    private(set) var acceptsHandOver = true
    private var started = false
    /// The stream-start group id of the current item (a flushing seek repeats it).
    private var currentGroup: UInt32?
    /// A reload of the same item: its STREAM_START is not a new `.started`.
    private var silentStart = false

    /// A seek to make once the item has prerolled (a start position, a seek during preroll, a rate).
    private(set) var startSeek: Int64?
    /// Whether the start seek ends with `.seekCompleted` (a restore, a reload or a user's seek; not a bare rate).
    private var startSeekReports = false
    private var startSeekInFlight = false
    /// From the decision to seek until gst_element_seek returns: no hand-over meanwhile (it would play the next
    /// item from the seek position).
    private(set) var seekIssuing = false
    private(set) var seekInFlight = false
    /// Seeks issued, and the serial of the last seek whose marker came through the bus: only an ASYNC_DONE popped
    /// after the latest seek's marker settles it (an earlier seek's, popped late on a loaded machine, would clear
    /// the target while the pipeline still flushes and answers positions from the old running time).
    private(set) var seekSerial: UInt64 = 0
    private var seekSerialSeen: UInt64 = 0
    /// An internal seek (the rate carried over a hand-over): no `.seekCompleted`.
    private var seekIsSilent = false
    /// Where the latest seek effect went (also a silent one's, which sets no `seekTarget`).
    private var seekPosition: Int64 = 0
    /// A pause came while a seek made in PLAYING was under way: that seek is made again once it settles (see
    /// `asyncDone`).
    private var pausedWhileSeeking = false
    /// The latest seek effect is such a second seek: no third.
    private var seekRepeated = false
    /// A seek that settled before the pipeline was back in PLAYING: where it went. A pause that lands before PLAYING
    /// can leave the pipeline at the target plus the time played before the seek (see `asyncDone`); the position it
    /// settles paused at is checked against this.
    private var landedBeforePlaying: Int64?
    /// Where a seek (or a start at a position) is going until it settles: what Position reads meanwhile.
    private(set) var seekTarget: Int64?
    private var buffering = false
    /// Since when playbin has sat in PAUSED while it should play, and whether it was nudged since (`stateCheck`).
    private var stuckSince: ContinuousClock.Instant?
    private var stuckNudged = false
    /// The fill level last reported with `.buffering` for the current item.
    private var bufferingLevel = 100
    private var reported: PlaybackState? = .stopped
    /// An error happened since the last NULL: the next reset goes through NULL.
    private var dirty = false
    private var lastDuration: Int64??
    private var tags = StreamTags()
    private var draining: Drain?
    private var handOverWatch: Drain?

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
        s.canSeek = item.knownSeekable || seekable == true
        s.positionOverride = seekTarget
        return s
    }

    /// The item last started (or loaded), kept after a stop so that play starts it again.
    public var currentItem: PlaybackItem? { item }
    /// The pipeline state last reported by `.stateChanged`.
    public var reportedState: PlaybackState { reported ?? .stopped }
    /// Whether the bus thread should wake often: a deadline or a hand-over is being watched.
    public var isWatching: Bool {
        if case .prerolling = phase { return true }
        return draining != nil || handOverWatch != nil || !pending.isEmpty
    }

    // MARK: - Inputs

    public mutating func handle(_ input: Input) -> Step {
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
            acceptsHandOver = true
            return Step()
        case .seekIssued(let ok): return Step(effects: seekIssued(ok), accepted: ok)
        case .marker(let gen, let stopped):
            busGeneration = gen
            guard stopped, gen == generation else { return Step() }
            return Step(effects: report(.stopped))
        case .seekMarker(let serial):
            seekSerialSeen = max(seekSerialSeen, serial)
            return Step()
        case .rejectedMarker(let gen):
            guard gen == generation, busGeneration == generation else { return Step() }
            let refused = rejectedOrder.compactMap { item in rejected[item].map { (item, $0) } }
            rejected = [:]
            rejectedOrder = []
            return Step(effects: refused.flatMap { item, error in
                [.log("next item \(item) refused before hand-over: \(error)"), .emit(.failed(item, error))]
            })
        default:
            // Everything else comes from the pipeline: drop what was posted before the current marker.
            guard busGeneration == generation else { return Step() }
            return Step(effects: pipelineMessage(input))
        }
    }

    private mutating func pipelineMessage(_ input: Input) -> [Effect] {
        switch input {
        case .settled(let state, let position):
            guard !seekInFlight, startSeek == nil, !buffering else { return [] }
            if let again = seekAgainIfLandedAway(state, position: position) { return again }
            return report(Self.playbackState(state))
        case .asyncDone(let position, let duration, let seekable, let settled):
            return asyncDone(position: position, duration: duration, seekable: seekable, settled: settled)
        case .streamStart(let group, let duration, let seekable):
            return streamStart(group: group, duration: duration, seekable: seekable)
        case .durationChanged(let duration):
            return durationEvents(duration)
        case .tags(let new):
            guard let item else { return [] }
            let merged = tags.merging(new)
            guard merged != tags else { return [] }
            tags = merged
            return [.emit(.tags(item, merged))]
        case .endOfStream:
            guard let item, phase == .running || isPrerolling else { return [] }
            phase = .finished
            draining = nil
            // The end with a hand-over still pending: the next item's source group may be broken (its error can
            // come later, from an older generation); the next reset goes through NULL.
            if !pending.isEmpty { dirty = true }
            pending = []
            return [.log("finished (EOS)"), .emit(.finished(item))]
        case .error(let error, let now):
            return failed(error, now: now)
        case .buffering(let percent):
            var effects: [Effect] = []
            let level = min(100, max(0, percent))
            if let item, level != bufferingLevel {
                bufferingLevel = level
                effects.append(.emit(.buffering(item, level)))
            }
            if level < 100, !buffering, status == .playing, phase == .running {
                buffering = true
                return effects + [.setState(.paused)]
            }
            if level >= 100, buffering {
                buffering = false
                return effects + (status == .playing ? [.setState(.playing)] : [])
            }
            return effects
        case .tick(let now, let position):
            return tick(now: now, position: position)
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
        let (keptTags, keptDuration) = (tags, lastDuration)
        item = new
        resetItem()
        if reload {
            tags = keptTags
            lastDuration = keptDuration
            silentStart = true
        }
        acceptsHandOver = false
        phase = .prerolling(deadline: now.advanced(by: prerollTimeout))
        status = paused ? .paused : .playing
        seekable = new.knownSeekable ? true : nil
        let position = max(0, position)
        let seekAtStart = position > 0 || rate != 1
        startSeek = seekAtStart ? position : nil
        startSeekReports = reload || position > 0
        seekTarget = position > 0 ? position : nil
        return [.reset(fully: fully), .postMarker(generation, stopped: false), .setURI(new.uri),
                .setState(paused || seekAtStart ? .paused : .playing)]
    }

    private var isPrerolling: Bool {
        if case .prerolling = phase { return true }
        return false
    }

    private mutating func resume(_ target: PlaybackState, now: ContinuousClock.Instant) -> Step {
        guard let item else { return Step(accepted: false) }
        switch phase {
        case .idle, .finished:
            // Stopped, failed or at the end: start the item again from the beginning.
            return Step(effects: load(item, paused: target == .paused, at: 0, reload: false, now: now))
        case .prerolling, .running:
            if target == .paused, status == .playing, seekInFlight, !startSeekInFlight { pausedWhileSeeking = true }
            status = target
            // Pausing is always safe; playing waits for a start seek still to make or to settle (and for buffering).
            if target == .paused { return Step(effects: [.setState(.paused)]) }
            if startSeek != nil || startSeekInFlight || buffering { return Step() }
            return Step(effects: [.setState(.playing)])
        }
    }

    private mutating func stop() -> [Effect] {
        let fully = dirty
        dirty = false
        generation += 1
        resetItem()
        phase = .idle
        status = .stopped
        return [.reset(fully: fully), .postMarker(generation, stopped: true)]
    }

    private mutating func reopen(at position: Int64, paused: Bool?, now: ContinuousClock.Instant) -> [Effect] {
        // The shell went through NULL itself: no broken source group is left to clear.
        dirty = false
        guard let item, status != .stopped, phase == .running || isPrerolling else {
            // Stopped, failed or at the end: the next load or play opens the item on the new sink.
            acceptsHandOver = false
            return [.reset(fully: false)]
        }
        let holdPaused = paused ?? (status == .paused)
        return [.log("output changed: re-opening \(item) at \(position) ns")]
            + load(item, paused: holdPaused, at: position, reload: true, now: now)
    }

    private mutating func seek(to requested: Int64, now: ContinuousClock.Instant) -> Step {
        let position = max(0, requested)
        guard let item, status != .stopped else { return Step(accepted: false) }
        switch phase {
        case .idle:
            return Step(accepted: false)
        case .prerolling:
            // Applied once the item has prerolled.
            if seekable == false, !item.knownSeekable { return Step(accepted: false) }
            startSeek = position
            startSeekReports = true
            seekTarget = position
            // Hold the item in PAUSED until the seek has landed, so nothing is heard from the old position.
            return Step(effects: [.setState(.paused)])
        case .running, .finished:
            if seekable == false, !item.knownSeekable { return Step(accepted: false) }
            if startSeekInFlight {
                // The start seek has not settled: seek again on top of it, and keep the state for after it.
                seekTarget = position
                startSeekReports = true
                seekIsSilent = false
                return Step(effects: [seekEffect(position)])
            }
            if !pending.isEmpty {
                // A flushing seek after a hand-over was prepared would jump into the next item in playbin: re-open
                // the current item at the position instead; about-to-finish asks for the next one again.
                return Step(effects: [.log("seek with a hand-over prepared: re-opening \(item) at \(position) ns")]
                            + load(item, paused: status != .playing, at: position, reload: true, now: now))
            }
            return Step(effects: issueSeek(position, silent: false))
        }
    }

    private mutating func issueSeek(_ position: Int64, silent: Bool) -> [Effect] {
        seekInFlight = true
        seekIsSilent = silent
        if !silent { seekTarget = position }
        if phase == .finished { phase = .running } // seeking back after EOS plays again
        return [seekEffect(position)]
    }

    /// A seek effect with the next serial; no hand-over until it has been issued.
    private mutating func seekEffect(_ position: Int64) -> Effect {
        seekIssuing = true
        landedBeforePlaying = nil
        seekRepeated = false
        seekPosition = position
        seekSerial += 1
        return .seek(position, rate: rate, serial: seekSerial)
    }

    private mutating func setRate(_ requested: Double, position: Int64?, now: ContinuousClock.Instant) -> Step {
        guard requested.isFinite else { return Step(accepted: false) }
        rate = min(4, max(0.25, requested))
        guard let item else { return Step() }
        switch phase {
        case .idle:
            return Step() // applies at the next load
        case .prerolling:
            if startSeek == nil { startSeek = 0 }
            return Step()
        case .running, .finished:
            guard status != .stopped else { return Step() }
            let at = seekTarget ?? position ?? 0
            if !pending.isEmpty {
                return Step(effects: load(item, paused: status != .playing, at: at, reload: true, now: now))
            }
            if startSeekInFlight { return Step(effects: [seekEffect(at)]) }
            var effects = issueSeek(at, silent: false)
            seekTarget = at
            effects.insert(.log("rate \(rate) from \(at) ns"), at: 0)
            return Step(effects: effects)
        }
    }

    private mutating func seekIssued(_ ok: Bool) -> [Effect] {
        seekIssuing = false
        guard !ok else { return [] }
        seekInFlight = false
        pausedWhileSeeking = false
        seekTarget = nil
        guard startSeekInFlight else { return [.log("seek refused")] }
        // Unseekable after all (a stream): start from the beginning instead.
        startSeekInFlight = false
        seekable = false
        return [.log("start seek refused; starting at 0")] + stateAfterStartSeek()
    }

    private func stateAfterStartSeek() -> [Effect] {
        status == .playing && !buffering ? [.setState(.playing)] : []
    }

    // MARK: - about-to-finish (a streaming thread, synchronously)

    /// The item about to end and the generation it belongs to, or nil when no hand-over may be made now: a seek is
    /// decided or under way (a hand-over made before a flushing seek went through would play the next item from the
    /// seek position; about-to-finish fires again once the item drains after the seek).
    public func finishingItem() -> (PlaybackItem, UInt64)? {
        guard acceptsHandOver, startSeek == nil, !seekIssuing, let finishing = pending.last ?? item else { return nil }
        return (finishing, generation)
    }

    /// Hands `next` over if nothing changed since `finishingItem()` answered for generation `gen`.
    public mutating func handOver(_ next: PlaybackItem, generation gen: UInt64) -> [Effect] {
        guard gen == generation, acceptsHandOver, startSeek == nil, !seekIssuing else { return [] }
        pending.append(next)
        return [.log("gapless hand-over → \(next)"), .setURI(next.uri), .wake]
    }

    /// Records a next item refused before the hand-over (a missing file); the current one ends normally.
    public mutating func refuse(_ next: PlaybackItem, _ error: PlaybackError, generation gen: UInt64) -> [Effect] {
        guard gen == generation, acceptsHandOver else { return [] }
        if rejected[next] == nil { rejectedOrder.append(next) }
        rejected[next] = error
        return [.postRejected(gen)]
    }

    // MARK: - Bus messages

    private mutating func asyncDone(position: Int64?, duration: Int64?, seekable known: Bool?,
                                    settled: PipelineState?) -> [Effect] {
        var effects: [Effect] = []
        if isPrerolling {
            phase = .running
            if let known, seekable != true { seekable = known }
            if let seek = startSeek {
                startSeek = nil
                seekInFlight = true
                seekIsSilent = !startSeekReports
                startSeekInFlight = true
                return [seekEffect(seek)] + durationEvents(duration)
            }
        } else if seekInFlight, seekSerialSeen == seekSerial, let reason = repeatReason(position: position, settled: settled) {
            // GStreamer 1.22: a pipeline set to PAUSED around a flushing seek (while one made in PLAYING is under
            // way, or while a Play and a Pause are still being carried out) can keep the running time it had played
            // before the seek. Paused, it reports the target plus that time (30.9 s for a seek to 30 s after 0.9 s
            // of playing); resumed, it renders the first buffers that much late. A flushing seek made in PAUSED sets
            // the running time right, so the seek is made again before it counts as settled: the target stays what
            // Position reads, and `.seekCompleted` comes once, after it.
            pausedWhileSeeking = false
            let again = seekEffect(seekPosition)
            seekRepeated = true
            return [.log("\(reason): seeking again to \(seekPosition) ns"), again] + durationEvents(duration)
        } else if seekInFlight, seekSerialSeen == seekSerial {
            seekInFlight = false
            if startSeekInFlight {
                startSeekInFlight = false
                effects += stateAfterStartSeek()
            }
            seekTarget = nil
            if known == true { seekable = true }
            if let item, !seekIsSilent { effects.append(.emit(.seekCompleted(item, position ?? 0))) }
            seekIsSilent = false
            landedBeforePlaying = settled == .playing || seekRepeated ? nil : seekPosition
        } else if !seekInFlight, startSeek == nil, !buffering, let settled,
                  let again = seekAgainIfLandedAway(settled, position: position) {
            return again + durationEvents(duration)
        }
        effects += durationEvents(duration)
        // A settled pipeline whose state is its target: report it (once).
        if let settled, phase == .running, !seekInFlight, startSeek == nil, !buffering, effects.allSatisfy({ !$0.isSetState }) {
            effects += report(Self.playbackState(settled))
        }
        return effects
    }

    /// A pause that came just after a seek settled, before the pipeline was back in PLAYING, meets the same GStreamer
    /// fault as one during the seek (see `asyncDone`): settled paused away from where the seek went, the seek is made
    /// again, silently (its `.seekCompleted` was sent), and `.paused` is reported once it lands. Any settled PLAYING
    /// ends the watch.
    private mutating func seekAgainIfLandedAway(_ settled: PipelineState, position: Int64?) -> [Effect]? {
        guard let target = landedBeforePlaying, settled != .ready, settled != .null else { return nil }
        guard settled == .paused, status == .paused, phase == .running else {
            landedBeforePlaying = nil
            return nil
        }
        guard let position, abs(position - target) > 100_000_000 else { return nil }
        landedBeforePlaying = nil
        seekInFlight = true
        seekIsSilent = true
        seekTarget = target
        let again = seekEffect(target)
        seekRepeated = true
        return [.log("paused at \(position) ns before playing after a seek: seeking again to \(target) ns"), again]
    }

    /// Why the seek that just settled is to be made again (see `asyncDone`), or nil.
    private func repeatReason(position: Int64?, settled: PipelineState?) -> String? {
        guard !seekRepeated else { return nil }
        if pausedWhileSeeking { return "paused while seeking" }
        if settled == .paused, let position, abs(position - seekPosition) > 100_000_000 {
            return "paused at \(position) ns after a seek"
        }
        return nil
    }

    private mutating func streamStart(group: UInt32?, duration: Int64?, seekable known: Bool?) -> [Effect] {
        if !started, let item {
            started = true
            currentGroup = group
            if known == true { seekable = true }
            if silentStart {
                silentStart = false
                return []
            }
            return [.log("started \(item)"), .emit(.started(item))] + durationEvents(duration)
        }
        // A flushing seek makes the sink see the same stream-start again (same group id): not a new item.
        if let group, group == currentGroup { return [] }
        if group == nil, seekInFlight { return [] }
        guard !pending.isEmpty else { return [] }
        let next = pending.removeFirst()
        currentGroup = group
        item = next
        tags = StreamTags()
        lastDuration = nil
        handOverWatch = nil
        seekTarget = nil
        seekable = next.knownSeekable ? true : known
        var effects: [Effect] = [.log("started \(next)"), .emit(.started(next))] + durationEvents(duration)
        if rate != 1 {
            // playbin starts every new stream at rate 1: carry the rate over.
            effects += issueSeek(0, silent: true)
        }
        return effects
    }

    private mutating func failed(_ error: PlaybackError, now: ContinuousClock.Instant) -> [Effect] {
        dirty = true
        if draining != nil { return [.log("ignored error: \(error)")] } // more errors from the refused next item
        if !pending.isEmpty {
            let bad = pending.removeFirst()
            pending = []
            handOverWatch = nil
            draining = Drain(lastPosition: nil, lastAdvance: now, duration: lastDuration ?? nil)
            return [.log("next item \(bad) failed during gapless hand-over (\(error)); letting the current item finish"),
                    .emit(.failed(bad, error))]
        }
        guard let item, phase == .running || isPrerolling else { return [.log("ignored error: \(error)")] }
        phase = .idle
        return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure()
    }

    /// After a failure or a stalled drain: NULL (READY is not enough after an error), a new generation, no state
    /// event. The player loads what comes next or stops.
    private mutating func resetAfterFailure() -> [Effect] {
        generation += 1
        pending = []
        draining = nil
        handOverWatch = nil
        seekInFlight = false
        startSeek = nil
        startSeekInFlight = false
        seekTarget = nil
        dirty = false
        return [.reset(fully: true), .postMarker(generation, stopped: false)]
    }

    /// Playing promises a pipeline that plays. After a network stream prerolled, playbin was seen (about one start in
    /// four of an Icecast stream) to commit PAUSED, announce that it goes on to PLAYING, and never get there: the
    /// status said Playing while the position held at 0, and playbin stayed "busy" going to PLAYING, so that asking
    /// again changed nothing. Sitting in PAUSED for a second while nothing else explains it (a preroll, a seek,
    /// buffering) gets one nudge (PAUSED, then PLAYING); two seconds more and the item fails, as a stalled one does:
    /// the player reconnects a live stream and moves on from anything else, and the status never lies.
    private mutating func stateCheck(current: PipelineState, target: PipelineState, now: ContinuousClock.Instant) -> [Effect] {
        let shouldPlay = status == .playing && phase == .running && !buffering && !seekInFlight && startSeek == nil
            && !startSeekInFlight
        guard shouldPlay, current == .paused, let item else {
            stuckSince = nil
            stuckNudged = false
            return []
        }
        guard let since = stuckSince else {
            stuckSince = now
            return []
        }
        if !stuckNudged, now - since >= .seconds(1) {
            stuckNudged = true
            return [.log("playbin sat in PAUSED (heading for \(target)) while playing: setting PAUSED, then PLAYING"),
                    .setState(.paused), .setState(.playing)]
        }
        guard stuckNudged, now - since >= .seconds(3) else { return [] }
        stuckSince = nil
        stuckNudged = false
        phase = .idle
        let error = PlaybackError(domain: "stream", code: 1, message: "The pipeline stopped before playing and would not start.")
        return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure()
    }

    private mutating func tick(now: ContinuousClock.Instant, position: Int64?) -> [Effect] {
        if case .prerolling(let deadline) = phase, now >= deadline, let item {
            phase = .idle
            let error = PlaybackError.timedOut(prerollTimeout)
            return [.log("\(item) failed: \(error)"), .emit(.failed(item, error))] + resetAfterFailure()
        }
        // A hand-over that neither starts nor fails (a truncated file can stall playbin with no error): watch it
        // like a failed one.
        if draining == nil, !pending.isEmpty, !seekInFlight, !buffering {
            if handOverWatch == nil { handOverWatch = Drain(lastPosition: nil, lastAdvance: now, duration: lastDuration ?? nil) }
        } else {
            handOverWatch = nil
        }
        let watchingHandOver = draining == nil
        guard var drain = draining ?? handOverWatch, let item else { return [] }
        func store(_ drain: Drain) { if watchingHandOver { handOverWatch = drain } else { draining = drain } }
        guard status == .playing, !buffering else {
            drain.lastAdvance = now
            store(drain)
            return []
        }
        if position != drain.lastPosition {
            drain.lastPosition = position
            drain.lastAdvance = now
        }
        store(drain)
        if watchingHandOver {
            // Normal gapless playback keeps the position moving until STREAM_START. A loaded machine can take a while
            // to start the next item, and giving up resets the pipeline while playbin may be setting it up (a READY
            // against its pad-added can deadlock GStreamer 1.22): wait 3 s.
            guard now - drain.lastAdvance > .seconds(3) else { return [] }
            let stuck = pending.first
            pending = []
            handOverWatch = nil
            phase = .finished
            var effects: [Effect] = []
            if let stuck {
                effects += [.log("next item \(stuck) never started after the hand-over; giving up on it"),
                            .emit(.failed(stuck, PlaybackError(domain: "stream", code: 1, message: "The stream stalled before it started.")))]
            }
            return effects + [.log("finished \(item) after a stalled hand-over"), .emit(.finished(item))] + resetAfterFailure()
        }
        let atEnd = position != nil && drain.duration != nil && position! >= drain.duration! - 20_000_000
        let stalled = now - drain.lastAdvance > .milliseconds(1500)
        guard atEnd || stalled else { return [] }
        draining = nil
        phase = .finished
        return [.log("finished \(item) after a failed hand-over"), .emit(.finished(item))] + resetAfterFailure()
    }

    // MARK: - Helpers

    private mutating func resetItem() {
        pending = []
        rejected = [:]
        rejectedOrder = []
        started = false
        currentGroup = nil
        startSeek = nil
        startSeekInFlight = false
        startSeekReports = false
        seekInFlight = false
        seekIsSilent = false
        seekIssuing = false
        pausedWhileSeeking = false
        seekRepeated = false
        landedBeforePlaying = nil
        seekTarget = nil
        silentStart = false
        buffering = false
        stuckSince = nil
        stuckNudged = false
        bufferingLevel = 100
        lastDuration = nil
        tags = StreamTags()
        draining = nil
        handOverWatch = nil
    }

    private mutating func durationEvents(_ duration: Int64?) -> [Effect] {
        guard let item, started, draining == nil, pending.isEmpty else { return [] }
        if let last = lastDuration, last == duration { return [] }
        lastDuration = .some(duration)
        return [.emit(.durationChanged(item, duration))]
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

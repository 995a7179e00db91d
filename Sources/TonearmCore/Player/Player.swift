import Foundation
import Logging
import Playback
import Synchronization

/// The one player of a session: the queue, what plays, and every command MPRIS can give.
/// Engine events and bus calls both land here, in order; nothing here blocks on either.
///
/// What the pipeline is doing (status, position, seeks, seekability) is the engine's: the player asks it and listens
/// to it and keeps no copy. The rest lives in extensions by concern: transport (PlayerTransport.swift), the queue
/// (PlayerQueue.swift), engine events (PlayerEngineEvents.swift), saving and restoring (PlayerPersistence.swift).
public actor Player {
    public static let minimumRate = 0.25
    public static let maximumRate = 4.0

    /// The published state and the one fan-out of events every face reads and follows (`state`, `events`).
    public nonisolated let channel = PlayerChannel()

    let engine: any PlaybackControl
    let plugins: [any SourcePlugin]
    /// Writes the state file off the actor; nil when the player keeps no state (tests).
    let stateWriter: StateWriter?
    let artCache: ArtCache
    let logger: Logger

    var queue = PlayQueue()
    var volume = 1.0
    /// When Tick is emitted (Policies/TickSchedule.swift), and its interval.
    var ticks: TickSchedule
    var tickInterval: Duration {
        get { ticks.interval }
        set { ticks.setInterval(newValue) }
    }
    /// `[playback.replaygain]`, with the mode as last set (config, or live over the bus).
    var replayGain: ReplayGainSettings
    /// True from a load until its track is heard (or fails): background work (loudness measurement) waits meanwhile.
    let startingTrack = Atomic<Bool>(false)
    /// The entry last announced as heard; a second start of the same one is a repeat (LoopStatus Track).
    var heard: TrackID?
    /// The entry whose failure its source is looking into (`SourcePlugin.explainFailure`): a second report of it
    /// meanwhile is the same failure.
    var explainingFailure: TrackID?
    /// Entries that failed to play, skipped until a user picks them explicitly.
    var skipper = FailureSkipper()
    var lastSnapshot: PlayerSnapshot?
    var saveScheduled = false
    /// The state last written in full, at position 0.
    var savedApartFromPosition: PersistedState?
    /// Whether the ReplayGain mode was set live (then it is saved and outlives a restart).
    var replayGainModeSetLive = false
    /// `[playback.equalizer]`: presets and clipping prevention (PlayerEqualizer.swift).
    let equalizerSettings: EqualizerSettings
    /// Its preset names, built once: every snapshot carries them.
    let equalizerPresetNames: [String]
    /// The equalizer now: from the config, or as last set live.
    var equalizer: EqualizerState
    /// Whether the equalizer was changed live (then it is saved and outlives a restart).
    var equalizerSetLive = false
    /// `[playback.crossfade]`, with the length and silence threshold as last set (config, or live).
    var crossfade: CrossfadeSettings
    /// Whether the crossfade was set live (then it is saved and outlives a restart).
    var crossfadeSetLive = false
    /// Entries waiting for their source's complete metadata (`SourcePlugin.enrich`).
    let enrichments = EnrichmentQueue()
    /// The player's own tasks (engine events, enrichment), cancelled at shutdown.
    var tasks: [Task<Void, Never>] = []
    var tickTask: Task<Void, Never>?
    /// Saves the position once a second while playing when the ticks come less often (`followPlayingForSaves`).
    var positionSaver: Task<Void, Never>?
    /// When the position (or the whole state) was last handed to the writer.
    var positionSavedAt: ContinuousClock.Instant?
    /// Set by `shutdown`: nothing is saved or announced after it.
    var isShutDown = false
    /// Where lyrics come from (nil: no lyrics), and the current track's (PlayerLyrics.swift).
    let lyricsFinder: LyricsFinder?
    var lyricsFollower = LyricsFollower()
    var lyricsTasks = LyricsTasks()
    /// How a live stream that drops is reconnected, and where that stands (PlayerStreams.swift).
    let reconnectPolicy: StreamReconnectPolicy
    var reconnector: StreamReconnector
    /// Whether the current stall watch began before the engine could receive data: its time runs from the engine.
    var stallWatchBeganBeforeEngine = false
    var streamTimers: [StreamReconnector.TimerKind: Task<Void, Never>] = [:]
    /// The outputs and the current one's trouble (PlayerOutputs.swift).
    var outputState = OutputState()
    var outputRecovery: OutputRecovery
    let outputPolicy: OutputRecoveryPolicy

    /// Where listens, skips and ratings are kept (nil: no history), what counts (Policies/PlayCounter.swift), and the
    /// writes waiting, in order (PlayerHistory.swift).
    let history: (any ListeningHistory)?
    var counter = PlayCounter()
    /// The pipeline's state as the engine's `stateChanged` reports told it, in order (the engine's own `pipelineState`
    /// folded up to the report in hand): a report handled late is judged by the state when it happened, not by the
    /// live one (a 1 s track's start, handled after it ended, saw the pipeline between tracks and was never heard).
    var reportedPipeline = PlaybackState.stopped
    var historyQueue: AsyncStream<HistoryWork>.Continuation?
    /// Where a queue about to end finds more (PlayerContinue.swift), and whether it does.
    let continuation: (any QueueContinuation)?
    var continueMode: ContinueMode = .off
    /// The tracks heard last, newest first, that a continuation is like.
    var recentlyHeard: [TrackMetadata] = []
    var continuing = false

    /// What `about-to-finish` reads on a GStreamer thread: the entries after the current one.
    let handover = HandoverSnapshot()

    /// The state after the last change, from any thread without waiting for the actor: what every face answers
    /// reads with. A change made by a call is in it before the call returns.
    public nonisolated var state: PlayerState { channel.state }

    /// Every change as one numbered event; each face subscribes with a bounded buffer of its own.
    public nonisolated var events: EventFanOut<PlayerEvent> { channel.events }

    /// Runs the actor's jobs; lets a face's thread run a command in place when the Player is idle (`takeAtOnce`).
    private nonisolated let executor = PlayerExecutor()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs `command` now, on the caller's thread, when the Player has nothing else to do; nil (and nothing done)
    /// when it is busy, so the caller sends it the usual way, behind what came first. For a quick command whose
    /// effect is published before it returns (`toggleAtOnce`): the caller can answer at once.
    nonisolated func takeAtOnce<T: Sendable>(_ command: (isolated Player) -> T) -> T? {
        executor.runNow { assumeIsolated(command) }
    }

    /// The queue version last published, grown at every change of the entries or their metadata.
    var queueVersion: UInt64 = 0
    /// The entries `queueVersion` was last grown for.
    var versionedTracks: [Track] = []

    public init(engine: any PlaybackControl, plugins: [any SourcePlugin], stateStore: StateStore?, artCache: ArtCache,
                tickInterval: Duration = .seconds(1), lyricsFinder: LyricsFinder? = nil,
                replayGain: ReplayGainSettings = ReplayGainSettings(),
                equalizer: EqualizerSettings = EqualizerSettings(),
                crossfade: CrossfadeSettings = CrossfadeSettings(),
                reconnectPolicy: StreamReconnectPolicy = StreamReconnectPolicy(),
                outputs: [AudioOutput] = [], outputRecovery: OutputRecoveryPolicy = OutputRecoveryPolicy(),
                configuredOutput: String? = nil, history: (any ListeningHistory)? = nil,
                continuation: (any QueueContinuation)? = nil, logger: Logger = Logger(label: "tonearm.player")) {
        self.history = history
        self.continuation = continuation
        self.replayGain = replayGain
        equalizerSettings = equalizer
        equalizerPresetNames = equalizer.presetNames
        self.equalizer = equalizer.initialState
        self.crossfade = crossfade
        outputPolicy = outputRecovery
        self.outputRecovery = OutputRecovery(policy: outputRecovery)
        let current = engine.output
        outputState = OutputState(configured: outputs.contains { $0.name == current.name } ? outputs : [current] + outputs)
        outputState.configuredStart = configuredOutput
        self.reconnectPolicy = reconnectPolicy
        reconnector = StreamReconnector(policy: reconnectPolicy)
        self.engine = engine
        self.lyricsFinder = lyricsFinder
        self.plugins = plugins
        stateWriter = stateStore.map { StateWriter(store: $0, logger: logger) }
        self.artCache = artCache
        ticks = TickSchedule(interval: tickInterval)
        self.logger = logger
    }

    /// Starts listening to the engine; call once.
    public func start() {
        engine.setNextItemProvider { [handover] finishing in handover.next(after: finishing) }
        applyEqualizer()
        applyCrossfade(announce: false)
        let engineReports = engine.reports
        tasks.append(Task { [weak self] in
            for await report in engineReports {
                guard let self else { return }
                await self.handle(report.event, at: report.at)
            }
        })
        tasks.append(Task { [weak self, enrichments] in
            for await _ in enrichments.signals {
                // What was enriched is applied in batches, at least every 100 ms, so a long run of slow probes still
                // shows each result soon and a quick run of 10,000 entries costs a few publications, not 10,000.
                var done: [(TrackID, TrackMetadata)] = []
                var since = ContinuousClock.now
                for (id, plugin) in enrichments.take() {
                    guard let metadata = await self?.track(id)?.metadata else { continue }
                    done.append((id, await plugin.enrich(metadata)))
                    if since.duration(to: .now) >= .milliseconds(100) {
                        await self?.applyMetadataNow(done)
                        done = []
                        since = .now
                    }
                }
                if !done.isEmpty { await self?.applyMetadataNow(done) }
            }
        })
        startHistory()
        publish()
    }

    /// Saves, stops the engine and ends the player's own tasks; the daemon calls this before exiting.
    public func shutdown() {
        guard !isShutDown else { return }
        save()
        isShutDown = true
        engine.shutdown()
        for task in tasks { task.cancel() }
        tickTask?.cancel()
        positionSaver?.cancel()
        for timer in streamTimers.values { timer.cancel() }
        outputState.retry?.cancel()
        stopFollowingLyrics()
        enrichments.finish()
        historyQueue?.finish()
        channel.events.finish()
    }

    // MARK: Reading

    public var snapshot: PlayerSnapshot { makeSnapshot() }
    public var tracks: [Track] { queue.tracks }
    public func track(_ id: TrackID) -> Track? { queue.track(id) }
    public var currentInterval: Duration { tickInterval }

    /// The engine's status as MPRIS names it.
    var status: PlaybackStatus {
        switch engine.status {
        case .playing: return .playing
        case .paused: return .paused
        case .stopped: return .stopped
        }
    }

    /// The entry whose stream the engine plays or holds paused; nil when stopped.
    var loaded: TrackID? { engine.itemToken.map { TrackID(serial: $0) } }

    /// The engine's item (its token) the published position basis counts for: the engine may have handed over to the
    /// next one since (its report not taken in yet).
    var basisItem: UInt64?

    /// The position the faces read now (µs) with the engine item it counts for; nil before any basis. A Pause holds it
    /// and a relative seek counts from it, so neither contradicts what a client was shown.
    var publishedPosition: (item: UInt64, microseconds: Int64)? { basisItem.map { ($0, channel.read(\.position).now) } }

    /// Position in the current track in microseconds (0 when stopped; a seek's target until it settles).
    public func position() -> Int64 { engine.reportedPosition / 1000 }

    /// The position from the published basis, from any thread without waiting for the actor or the pipeline: the
    /// faces answer Position with it.
    public nonisolated func positionNow() -> Int64 { channel.read(\.position).now }

    /// Where the position stands now, read from the pipeline once, for the faces to count on from.
    func makeBasis() -> PositionBasis {
        let playback = engine.snapshot
        // Every basis made is published: this is the item the published one counts for.
        basisItem = playback.item?.token
        var position = engine.reportedPosition / 1000
        let instant = ContinuousClock.now
        // A load from the start has played nothing until it prerolled, though the pipeline may still report the
        // last item playing (its reset's state changes not in yet): the position stands at 0 until the track starts.
        let moving = playback.item != nil && playback.status == .playing && playback.positionOverride == nil
            && !playback.prerollingFromStart && engine.pipelineState == .playing && reconnector.level >= 100
        // Just after a gapless hand-over the pipeline reports where the previous track was until the sink plays the
        // new one (a loaded run read 5.05 s for a track 0.1 s in): a position past what the new track can have
        // reached since it started is the old one's, and the basis counts from the start instead.
        if let start = playback.handedOverAt, playback.positionOverride == nil {
            let elapsed = start.duration(to: instant)
            if elapsed < .seconds(3) {
                let reached = Int64(Double(elapsed / .microseconds(1)) * max(playback.rate, 0))
                if position > reached + 500_000 { position = reached }
            }
        }
        let length = playback.item.flatMap { queue.track(TrackID(serial: $0.token))?.metadata.length }
        return PositionBasis(position: position, instant: instant, rate: moving ? playback.rate : 0, limit: length)
    }

    func makeSnapshot() -> PlayerSnapshot {
        // The two fields used below are read out at once: Swift 6.3.1's optimizer (CopyPropagation) crashed on this
        // function in release builds ("Found outside of lifetime use!") when the whole snapshot was kept alive
        // across the queue reads.
        let playback = engine.snapshot
        let loadedToken = playback.item?.token
        let pipelineSeeks = playback.canSeek
        let rate = playback.rate
        var s = PlayerSnapshot()
        s.status = status
        s.loop = queue.loop
        s.shuffle = queue.shuffle
        s.volume = volume
        s.rate = rate
        s.current = queue.current
        let hasCurrent = queue.current != nil
        s.canGoNext = hasCurrent && queue.next(after: queue.currentID, automatic: false) != nil
        s.canGoPrevious = hasCurrent && queue.previous(before: queue.currentID) != nil
        s.canPlay = hasCurrent
        s.canPause = hasCurrent
        let isLoaded = hasCurrent && loadedToken != nil && loadedToken == queue.currentID?.serial
        s.canSeek = isLoaded && (pipelineSeeks || queue.current.map(Self.knownSeekable) == true)
        s.tracks = queue.tracks
        if queue.tracks != versionedTracks {
            queueVersion &+= 1
            versionedTracks = queue.tracks
        }
        s.queueVersion = queueVersion
        s.nextID = hasCurrent ? playable(after: queue.currentID, automatic: true) : nil
        s.currentIndex = queue.currentID.flatMap(queue.position(of:))
        s.nextIndex = s.nextID.flatMap(queue.position(of:))
        if let id = queue.currentID, lyricsFollower.trackID == id {
            s.lyricsText = lyricsFollower.text
            s.lyricsLine = lyricsFollower.line
            s.lyrics = lyricsFollower.lyrics
        }
        s.replayGainMode = replayGain.mode
        s.equalizer = equalizer
        s.equalizerPresets = equalizerPresetNames
        s.crossfade = crossfade.seconds
        s.silenceThreshold = crossfade.silenceThreshold
        s.output = engine.output.name
        s.outputProblem = outputRecovery.problem
        s.outputs = outputs
        s.appliedGain = appliedGain
        s.buffering = reconnector.level
        s.tickInterval = tickInterval
        s.continueMode = continueMode
        return s
    }

    /// Publishes the state after a change (with a `changed` event when anything a face shows changed) and sets
    /// the position basis afresh. `command`: the change a command made, whose caller may be answered now. `deliver`:
    /// false leaves the event for the next publication to hand over with its own.
    func publish(command: Bool = false, deliver: Bool = true) {
        checkListening()
        followLyricsTrack()
        let s = makeSnapshot()
        defer { followPlayingForSaves() }
        guard s != lastSnapshot else {
            channel.publish(position: makeBasis(), deliver: deliver, taken: command)
            return
        }
        lastSnapshot = s
        channel.publish(snapshot: s, position: makeBasis(), event: .changed(s), deliver: deliver, taken: command)
    }

    /// Tells every face of `event`; the published state is the one of the last `publish`, with the position basis
    /// set afresh only after a seek (a queue edit does not move the playhead, and a 5,000-entry Enqueue must not
    /// query the pipeline 5,000 times).
    func emit(_ event: PlayerEvent) {
        if case .seeked = event {
            channel.publish(position: makeBasis(), event: event)
        } else {
            channel.publish(event: event)
        }
    }

    /// Tells every face of a change that the published state holds but `publish` does not announce as `changed`
    /// (the lyrics line, buffering, the ReplayGain mode, the output, the tick interval), with that state. The next
    /// `publish` still compares against the last `changed`, since faces diff `changed` snapshots among themselves.
    func emitWithState(_ event: PlayerEvent) {
        channel.publish(snapshot: makeSnapshot(), position: makeBasis(), event: event)
    }

    // MARK: Ticks

    /// `deliver` false: the tick is numbered and the state set, but the faces are handed it with the next event
    /// published.
    func emitTick(position: Int64? = nil, deliver: Bool = true) {
        checkListening()
        guard let id = loaded ?? queue.currentID else { return }
        // Every tick sets the faces' position basis afresh from the pipeline.
        let basis = makeBasis()
        channel.publish(position: basis, event: .tick(id, position: position ?? basis.position, length: queue.track(id)?.metadata.length ?? 0),
                        deliver: deliver)
    }

    /// Ticks while playing, from now; any earlier tick loop ends.
    func startTicking() { perform(ticks.restart()) }

    func stopTicking() { perform(ticks.stop()) }

    /// Ticks follow the status: after every command and engine event.
    func followStatus() {
        perform(ticks.follow(playing: status == .playing))
        followLyrics()
    }

    private func perform(_ actions: [TickSchedule.Action]) {
        for action in actions {
            switch action {
            case .start(let generation, let interval):
                tickTask?.cancel()
                tickTask = Task { [weak self] in
                    let clock = ContinuousClock()
                    var deadline = clock.now
                    while !Task.isCancelled {
                        deadline = deadline.advanced(by: interval)
                        // Behind schedule (a stalled or loaded machine): tick once now, not a burst of missed ticks.
                        let now = clock.now
                        if deadline < now { deadline = now }
                        try? await Task.sleep(until: deadline, clock: clock)
                        guard let self, await self.tickFired(generation) else { return }
                    }
                }
            case .stop:
                tickTask?.cancel()
                tickTask = nil
            case .tick:
                emitTick()
            }
        }
    }

    private func tickFired(_ generation: Int) -> Bool {
        let (goesOn, actions) = ticks.fired(generation: generation, playing: status == .playing,
                                            pipelinePlaying: engine.pipelineState == .playing)
        if !goesOn, generation == ticks.generation { tickTask = nil }
        guard goesOn else { return false }
        perform(actions)
        followLyrics()
        // The tick has just set the published basis from the pipeline: the save counts from it, not a query of its own.
        saveOnTick(position: actions.contains(.tick) ? positionNow() : nil)
        return true
    }
}

import Foundation
import Logging
import Playback
import Synchronization

/// The one player of a session: the queue, what plays, and every command MPRIS can give.
/// Engine events and bus calls both land here, in order; nothing here blocks on either.
public actor Player {
    public static let minimumRate = 0.25
    public static let maximumRate = 4.0

    /// Events for the bus face, in the order things happened.
    public nonisolated let events: AsyncStream<PlayerEvent>
    private let eventSink: AsyncStream<PlayerEvent>.Continuation

    private let engine: PlaybackEngine
    private let plugins: [any SourcePlugin]
    private let stateStore: StateStore?
    private let artCache: ArtCache
    private let logger: Logger

    private var queue = PlayQueue()
    private var status = PlaybackStatus.stopped { didSet { sharePositionBasis() } }
    private var volume = 1.0
    private var rate = 1.0
    private var tickInterval: Duration
    private var canSeek = false
    /// Where the loaded track is opening (µs) until the engine reports its start there.
    private var pendingStart: Int64? { didSet { sharePositionBasis() } }
    /// Where a seek is going (µs) until the engine says it got there: meanwhile the pipeline, flushing, may answer
    /// with the old position or none, and a client that just asked for 12 s must read 12 s.
    private var seekTarget: Int64? { didSet { sharePositionBasis() } }
    /// The entry whose stream the engine has (or is opening); nil when stopped.
    private var loaded: TrackID? { didSet { sharePositionBasis() } }
    /// The entry last reported as heard; a second start of the same one is a repeat.
    private var heard: TrackID?
    /// Entries that failed to play; skipped until a user picks them explicitly.
    private var failed: Set<TrackID> = []
    private var failuresInARow = 0
    private var lastSnapshot: PlayerSnapshot?
    private var tickGeneration = 0
    private var saveScheduled = false
    /// The state last written in full, at position 0.
    private var savedApartFromPosition: PersistedState?
    private var enrichQueue: AsyncStream<(TrackID, any SourcePlugin)>.Continuation?

    /// What `about-to-finish` reads on a GStreamer thread: the entry after the current one.
    private let handover = HandoverSnapshot()

    /// What `positionNow` needs besides the engine, copied here whenever it changes.
    private struct PositionBasis {
        var active = false
        var pendingStart: Int64?
        var seekTarget: Int64?
    }
    private let positionBasis = Mutex(PositionBasis())
    /// The state last announced (PropertiesChanged), readable from any thread.
    private let announcedSnapshot = Mutex<PlayerSnapshot?>(nil)

    /// What the bus last heard the player is (status, track, settings), without waiting for the actor; nil before
    /// `start`. Every change is published before the actor takes the next call, so a read made when no call is
    /// pending sees what `snapshot` would.
    public nonisolated var announced: PlayerSnapshot? { announcedSnapshot.withLock { $0 } }

    public init(engine: PlaybackEngine, plugins: [any SourcePlugin], stateStore: StateStore?, artCache: ArtCache,
                tickInterval: Duration = .seconds(1), logger: Logger = Logger(label: "tonearm.player")) {
        self.engine = engine
        self.plugins = plugins
        self.stateStore = stateStore
        self.artCache = artCache
        self.tickInterval = tickInterval
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Starts listening to the engine; call once.
    public func start() {
        engine.setNextItemProvider { [handover] finishing in handover.next(after: finishing) }
        let engineEvents = engine.events
        Task { [weak self] in
            for await event in engineEvents {
                guard let self else { return }
                await self.handle(event)
            }
        }
        let (enrichments, enrichSink) = AsyncStream.makeStream(of: (TrackID, any SourcePlugin).self)
        enrichQueue = enrichSink
        Task { [weak self] in
            for await (id, plugin) in enrichments {
                guard let metadata = await self?.track(id)?.metadata else { continue }
                let enriched = await plugin.enrich(metadata)
                await self?.applyMetadataNow(id, enriched)
            }
        }
        Task { [weak self] in
            // Saves the position now and then while playing, so a crash loses at most a second.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                await self.saveIfPlaying()
            }
        }
        publish()
    }

    // MARK: Reading

    public var snapshot: PlayerSnapshot { makeSnapshot() }
    public var tracks: [Track] { queue.tracks }
    public func track(_ id: TrackID) -> Track? { queue.track(id) }
    public var currentInterval: Duration { tickInterval }

    /// The same figure as `position()`, from any thread without waiting for the actor: the bus answers
    /// Get(Position) with it on its own thread.
    public nonisolated func positionNow() -> Int64 {
        let basis = positionBasis.withLock { $0 }
        guard basis.active else { return 0 }
        if let target = basis.seekTarget { return target }
        let now = max(0, (engine.position ?? 0) / 1000)
        if let pending = basis.pendingStart, now == 0 { return pending }
        return now
    }

    private func sharePositionBasis() {
        let basis = PositionBasis(active: status != .stopped && loaded != nil, pendingStart: pendingStart, seekTarget: seekTarget)
        positionBasis.withLock { $0 = basis }
    }

    /// Position in the current track in microseconds (0 when stopped).
    public func position() -> Int64 {
        guard status != .stopped, loaded != nil else { return 0 }
        if let seekTarget { return seekTarget }
        // While a track opens at a saved position (after a restart), the engine knows no position yet.
        let now = max(0, (engine.position ?? 0) / 1000)
        if let pending = pendingStart {
            guard now > 0 else { return pending }
            pendingStart = nil
        }
        return now
    }

    // MARK: Transport

    public func play() {
        switch status {
        case .playing: return
        case .paused:
            guard loaded != nil else { return startCurrent(paused: false) }
            engine.play()
            if rate != 1.0 { _ = engine.setRate(rate) }
            status = .playing
            startTicking()
            publish()
        case .stopped:
            startCurrent(paused: false)
        }
    }

    public func pause() {
        guard status == .playing else { return }
        engine.pause()
        status = .paused
        tickGeneration += 1
        emitTick()
        publish()
        scheduleSave()
    }

    public func playPause() {
        status == .playing ? pause() : play()
    }

    public func stop() {
        guard status != .stopped else { return }
        halt()
    }

    /// Stops the engine and the ticks whatever the status; Stop, the end of the queue and failures share it.
    private func halt() {
        engine.stop()
        loaded = nil
        status = .stopped
        tickGeneration += 1
        publish()
        scheduleSave()
    }

    /// MPRIS Next: the following track, or stop at the end unless looping the playlist.
    public func next() {
        guard let target = playable(after: queue.currentID, automatic: false) else {
            guard !queue.isEmpty else { return }
            stop()
            return
        }
        switchTo(target, keepingStatus: true)
    }

    public func previous() {
        var candidate = queue.previous(before: queue.currentID)
        var seen: Set<TrackID> = []
        while let c = candidate, failed.contains(c), seen.insert(c).inserted {
            candidate = queue.previous(before: c)
        }
        guard let target = candidate, !failed.contains(target) else {
            guard !queue.isEmpty else { return }
            stop()
            return
        }
        switchTo(target, keepingStatus: true)
    }

    /// Relative seek in microseconds: clamps at 0, and past the end acts as Next.
    public func seek(by offset: Int64) {
        pendingStart = nil
        guard canSeek, status != .stopped, loaded != nil else { return }
        let (target, overflow) = position().addingReportingOverflow(offset)
        let clamped = overflow ? (offset < 0 ? 0 : Int64.max) : max(0, target)
        if let length = queue.current?.metadata.length, clamped > length {
            next()
            return
        }
        let accepted = engine.seek(to: clamped.multipliedReportingOverflow(by: 1000).overflow ? Int64.max : clamped * 1000)
        seekTarget = accepted ? clamped : nil
    }

    /// Absolute seek; ignored for a stale track id or a position outside the track.
    public func setPosition(_ id: TrackID, _ microseconds: Int64) {
        pendingStart = nil
        guard canSeek, status != .stopped, loaded != nil, id == queue.currentID, microseconds >= 0 else { return }
        if let length = queue.current?.metadata.length, microseconds > length { return }
        seekTarget = engine.seek(to: microseconds * 1000) ? microseconds : nil
    }

    /// The most URIs one call may hand over: a call with 100,000 bad ones would queue as many failure signals.
    public static let maximumBatch = 10_000

    /// Throws InvalidArgs for a batch larger than `maximumBatch`.
    public static func checkBatch(_ uris: [String]) throws {
        guard uris.count <= maximumBatch else {
            throw TonearmError("InvalidArgs", "at most \(maximumBatch) URIs at once, not \(uris.count)")
        }
    }

    /// MPRIS OpenUri: one file through `open` (after the current track, played now, even from Stopped); throws
    /// when it cannot be played.
    @discardableResult
    public func openURI(_ uri: String) async throws -> TrackID {
        let (ids, refused) = await open([uri])
        if let first = ids.first { return first }
        throw refused.first?.error ?? TonearmError("UnsupportedType", "cannot play \(uri)")
    }

    /// "Open with": checks each URI by content, puts the playable ones right after the current track as one batch
    /// and plays the first; each one refused is reported (TrackFailed with NoTrack) and returned with its reason.
    public func open(_ uris: [String]) async -> (ids: [TrackID], refused: [(uri: String, error: TonearmError)]) {
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        var refused: [(uri: String, error: TonearmError)] = []
        for uri in uris {
            do {
                let (metadata, plugin) = try await resolve(uri)
                if let url = URL(string: metadata.url) { try await plugin.verify(url) }
                resolved.append((metadata, plugin))
            } catch {
                let reason = error as? TonearmError ?? TonearmError("UnsupportedType", "cannot play \(uri): \(error)")
                logger.error("cannot open \(uri): \(reason.message)")
                eventSink.yield(.trackFailed(.noTrack, uri: uri, error: reason))
                refused.append((uri, reason))
            }
        }
        let ids = insert(resolved, at: .afterCurrent)
        if let first = ids.first { goTo(first) }
        return (ids, refused)
    }

    public func goTo(_ id: TrackID) {
        guard queue.contains(id) else { return }
        failed.remove(id)
        switchTo(id, keepingStatus: false)
    }

    // MARK: Settings

    public func setLoop(_ loop: LoopStatus) {
        guard loop != queue.loop else { return }
        queue.loop = loop
        changedQueueShape()
    }

    public func setShuffle(_ on: Bool) {
        guard on != queue.shuffle else { return }
        queue.setShuffle(on)
        changedQueueShape()
    }

    /// Linear volume; negative values become 0 and values above 1 become 1 (the spec's advice).
    public func setVolume(_ value: Double) throws {
        guard value.isFinite else { throw TonearmError.invalidValue("volume must be a number between 0 and 1") }
        let clamped = min(1.0, max(0.0, value))
        guard clamped != volume else { return }
        volume = clamped
        engine.setVolume(clamped)
        publish()
        scheduleSave()
    }

    /// Playback rate; 0 pauses, values outside MinimumRate…MaximumRate are refused.
    public func setRate(_ value: Double) throws {
        guard value.isFinite else { throw TonearmError.invalidValue("rate must be a number") }
        if value == 0 {
            pause()
            return
        }
        guard (Self.minimumRate...Self.maximumRate).contains(value) else {
            throw TonearmError.invalidValue("rate \(value) is outside \(Self.minimumRate)…\(Self.maximumRate)")
        }
        guard value != rate else { return }
        rate = value
        if loaded != nil { _ = engine.setRate(value) }
        publish()
    }

    public func setTickInterval(_ interval: Duration) throws {
        guard Configuration.tickIntervalRange.contains(interval) else {
            throw TonearmError.invalidValue("tick interval must be between 10 ms and 60 s")
        }
        guard interval != tickInterval else { return }
        tickInterval = interval
        eventSink.yield(.tickIntervalChanged(interval))
        if status == .playing { startTicking() }
        scheduleSave()
    }

    // MARK: Queue editing

    /// Resolves URIs through the plugins and inserts them; all or nothing.
    @discardableResult
    public func add(_ uris: [String], at position: PlayQueue.Position) async throws -> [TrackID] {
        try Self.checkBatch(uris)
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        for uri in uris {
            resolved.append(try await resolve(uri))
        }
        return insert(resolved, at: position)
    }

    /// Like `add`, but reports and skips what cannot be resolved (for files given on a command line).
    public func addSkippingBad(_ uris: [String], at position: PlayQueue.Position, replacing: Bool) async -> (ids: [TrackID], errors: [TonearmError]) {
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        var errors: [TonearmError] = []
        for uri in uris {
            do { resolved.append(try await resolve(uri)) } catch let e as TonearmError {
                errors.append(e)
                logger.error("skipping \(uri): \(e.message)")
                eventSink.yield(.trackFailed(.noTrack, uri: uri, error: e))
            } catch {
                errors.append(TonearmError("Failed", "\(error)"))
            }
        }
        if replacing {
            return (replace(with: resolved), errors)
        }
        return (insert(resolved, at: position), errors)
    }

    /// Replaces the queue; with `play`, starts its first track.
    @discardableResult
    public func replaceQueue(_ uris: [String], play: Bool) async throws -> [TrackID] {
        try Self.checkBatch(uris)
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        for uri in uris {
            resolved.append(try await resolve(uri))
        }
        let ids = replace(with: resolved)
        if play, let first = ids.first { switchTo(first, keepingStatus: false) }
        return ids
    }

    /// MPRIS AddTrack: `after` nil or NoTrack means the front.
    public func addTrack(_ uri: String, after: TrackID?, setAsCurrent: Bool) async throws {
        let position: PlayQueue.Position
        if let after, after != .noTrack {
            guard queue.contains(after) else { throw TonearmError.noSuchTrack(after.path) }
            position = .after(after)
        } else {
            position = .front
        }
        let ids = try await add([uri], at: position)
        if setAsCurrent { goTo(ids[0]) }
    }

    public func remove(_ id: TrackID) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        let wasLoaded = loaded == id
        let wasPlaying = status == .playing
        queue.remove(id)
        failed.remove(id)
        eventSink.yield(.trackRemoved(id))
        if wasLoaded {
            if let next = queue.currentID, wasPlaying {
                load(next, paused: false)
            } else {
                halt()
            }
        }
        changedQueueShape()
    }

    public func move(_ id: TrackID, after: TrackID?) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        let target = after == .noTrack ? nil : after
        if let target, !queue.contains(target) { throw TonearmError.noSuchTrack(target.path) }
        guard queue.move(id, after: target) else { return }
        eventSink.yield(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
    }

    public func clear() {
        stop()
        queue.clear()
        failed = []
        eventSink.yield(.trackListReplaced([], current: nil))
        changedQueueShape()
    }

    // MARK: Restore and save

    /// Puts back a saved state, paused at the saved position.
    public func restore(_ state: PersistedState) async {
        queue = state.queue
        await remakeMissingStreams()
        volume = state.volume
        engine.setVolume(volume)
        if let micro = state.tickIntervalMicroseconds {
            let interval = Duration.microseconds(micro)
            if Configuration.tickIntervalRange.contains(interval) { tickInterval = interval }
        }
        eventSink.yield(.trackListReplaced(queue.ids, current: queue.currentID))
        if let current = queue.currentID {
            load(current, paused: true, at: state.position)
        }
        publish()
    }

    /// A source's rendition (`streamURL`) lives in a cache a person may empty; the source makes it again.
    private func remakeMissingStreams() async {
        for track in queue.tracks {
            guard let stream = track.metadata.streamURL.flatMap(URL.init(string:)), stream.isFileURL,
                  access(stream.path, R_OK) != 0, let url = URL(string: track.uri),
                  let plugin = plugins.first(where: { $0.canResolve(url) }) else { continue }
            var metadata = track.metadata
            do {
                metadata.streamURL = try await plugin.resolve(url).streamURL
            } catch {
                logger.warning("\(track.uri): \(error)")
                metadata.streamURL = nil
            }
            queue.updateMetadata(track.id, metadata)
        }
    }

    public func persistedState() -> PersistedState {
        var state = PersistedState()
        state.queue = queue
        state.position = position()
        state.volume = volume
        state.tickIntervalMicroseconds = Int64(tickInterval.components.seconds) * 1_000_000
            + tickInterval.components.attoseconds / 1_000_000_000_000
        return state
    }

    /// Writes the state file now (also used at shutdown).
    public func save() {
        guard let stateStore else { return }
        let state = persistedState()
        do {
            try stateStore.save(state)
            savedApartFromPosition = state.withoutPosition
        } catch {
            logger.error("could not save state: \(error)")
        }
    }

    /// Stops playback and saves; the daemon calls this before exiting.
    public func shutdown() {
        save()
        engine.shutdown()
        eventSink.finish()
    }

    // MARK: Engine events

    private func handle(_ event: PlaybackEvent) {
        switch event {
        case .started(let item):
            let id = TrackID(serial: item.token)
            let isHandover = handover.wasHandedOver(item.token) && loaded != id
            guard loaded == id || isHandover else { return }
            handover.started(item.token)
            let repeated = heard == id
            heard = id
            loaded = id
            failuresInARow = 0
            queue.setCurrent(id)
            if isHandover { refreshHandover() }  // what follows the new current item, for its own hand-over
            let metadata = queue.track(id)?.metadata
            canSeek = metadata?.seeksDespiteQuery == true || engine.isSeekable
            if repeated { eventSink.yield(.seeked(0)) } else if let metadata { tellSource(metadata) }
            publish()
            scheduleSave()
        case .stateChanged:
            // The player's status follows its commands; the engine's own transitions are not news.
            break
        case .durationChanged(let item, let ns):
            let id = TrackID(serial: item.token)
            // A seeking query can fail while the pipeline is busy; once seekable, a track stays so.
            if id == loaded { canSeek = canSeek || engine.isSeekable }
            if let ns, ns > 0, var track = queue.track(id), track.metadata.length != ns / 1000 {
                track.metadata.length = ns / 1000
                queue.updateMetadata(id, track.metadata)
                eventSink.yield(.trackMetadataChanged(track))
            }
            publish()
        case .tags(let item, let tags):
            let id = TrackID(serial: item.token)
            guard let track = queue.track(id) else { return }
            applyMetadataNow(id, track.metadata.merging(tags, artCache: artCache))
        case .seekCompleted(let item, let ns):
            guard TrackID(serial: item.token) == loaded else { return }
            pendingStart = nil
            seekTarget = nil
            canSeek = true
            eventSink.yield(.seeked(ns / 1000))
            emitTick(position: ns / 1000)
            if status == .playing { startTicking() }
            publish()
        case .finished(let item):
            let id = TrackID(serial: item.token)
            guard id == loaded else { return }
            if let next = playable(after: id, automatic: true) {
                load(next, paused: false)
            } else {
                halt()
            }
        case .failed(let item, let error):
            let id = TrackID(serial: item.token)
            let uri = queue.track(id)?.uri ?? item.uri // the queue's URI, not a rendition's
            let reason = TonearmError(Self.reason(for: error), "cannot play \(uri): \(error.message)")
            logger.error("\(reason.message)")
            eventSink.yield(.trackFailed(id, uri: uri, error: reason))
            failed.insert(id)
            refreshHandover()
            guard id == loaded else { return }
            failuresInARow += 1
            let wasPaused = status == .paused
            if failuresInARow < max(1, queue.tracks.count), let next = playable(after: id, automatic: false) {
                load(next, paused: wasPaused)
            } else {
                halt()
            }
        }
    }

    static func reason(for error: PlaybackError) -> String {
        switch error.domain {
        case "resource": return "NotFound"
        case "stream": return "CannotDecode"
        default: return "PlaybackFailed"
        }
    }

    // MARK: Internals

    private func resolve(_ uri: String) async throws -> (TrackMetadata, any SourcePlugin) {
        let url: URL
        if uri.hasPrefix("/") {
            url = URL(fileURLWithPath: uri)
        } else if let parsed = URL(string: uri), parsed.scheme != nil {
            url = parsed
        } else {
            throw TonearmError("InvalidUri", "not a URI or absolute path: \(uri)")
        }
        guard let plugin = plugins.first(where: { $0.canResolve(url) }) else {
            throw TonearmError.unsupportedScheme(uri)
        }
        return (try await plugin.resolve(url), plugin)
    }

    private func insert(_ resolved: [(TrackMetadata, any SourcePlugin)], at position: PlayQueue.Position) -> [TrackID] {
        guard !resolved.isEmpty else { return [] }
        let tracks = resolved.map { queue.makeTrack($0.0) }
        // TrackAdded names the track each one follows.
        let before: TrackID?
        switch position {
        case .end: before = queue.tracks.last?.id
        case .front: before = nil
        case .afterCurrent: before = queue.currentID ?? queue.tracks.last?.id
        case .after(let id): before = id
        }
        guard queue.insert(tracks, at: position) else { return [] }
        var after = before
        for (track, (_, plugin)) in zip(tracks, resolved) {
            eventSink.yield(.trackAdded(track, after: after ?? .noTrack))
            after = track.id
            enrichQueue?.yield((track.id, plugin))
        }
        if queue.currentID == nil, let first = queue.playOrder.first { queue.setCurrent(first) }
        changedQueueShape()
        return tracks.map(\.id)
    }

    private func replace(with resolved: [(TrackMetadata, any SourcePlugin)]) -> [TrackID] {
        halt()
        queue.clear()
        failed = []
        let tracks = resolved.map { queue.makeTrack($0.0) }
        _ = queue.insert(tracks, at: .end)
        queue.setCurrent(queue.playOrder.first)
        for (track, (_, plugin)) in zip(tracks, resolved) { enrichQueue?.yield((track.id, plugin)) }
        eventSink.yield(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
        return tracks.map(\.id)
    }

    /// The next entry that has not failed, following loop and shuffle.
    private func playable(after id: TrackID?, automatic: Bool) -> TrackID? {
        var candidate = queue.next(after: id, automatic: automatic)
        var seen: Set<TrackID> = []
        while let c = candidate, failed.contains(c) {
            guard seen.insert(c).inserted else { return nil }
            candidate = queue.next(after: c, automatic: false)
        }
        return candidate
    }

    /// Makes `id` current; plays it if playing (or always, when not keeping status), loads it paused if paused.
    private func switchTo(_ id: TrackID, keepingStatus: Bool) {
        let previousStatus = status
        queue.setCurrent(id)
        switch (keepingStatus, previousStatus) {
        case (true, .stopped):
            halt()
        case (true, .paused):
            load(id, paused: true)
        default:
            load(id, paused: false)
        }
    }

    private func startCurrent(paused: Bool) {
        guard let id = queue.currentID ?? queue.playOrder.first else { return }
        queue.setCurrent(id)
        load(id, paused: paused)
    }

    private func load(_ id: TrackID, paused: Bool, at position: Int64 = 0) {
        guard let track = queue.track(id), let serial = id.serial else { return }
        queue.setCurrent(id)
        loaded = id
        heard = nil
        canSeek = track.metadata.seeksDespiteQuery == true
        pendingStart = position > 0 ? position : nil
        seekTarget = nil
        engine.load(Self.item(track, serial), startPaused: paused, at: max(0, position) * 1000)
        if rate != 1.0 { _ = engine.setRate(rate) }
        status = paused ? .paused : .playing
        if status == .playing { startTicking() } else { tickGeneration += 1 }
        refreshHandover()
        publish()
        scheduleSave()
    }

    private func changedQueueShape() {
        if let current = queue.currentID, !queue.contains(current) { queue.setCurrent(nil) }
        refreshHandover()
        publish()
        scheduleSave()
    }

    /// The items that follow the loaded one in play order, a few ahead (to the first repeat: a looped track follows
    /// itself, a looped playlist comes round once).
    private func refreshHandover() {
        var upcoming: [PlaybackItem] = []
        var seen: Set<TrackID> = []
        var cursor = loaded
        while loaded != nil, upcoming.count < 8, let id = playable(after: cursor, automatic: true),
              let track = queue.track(id), let serial = id.serial {
            upcoming.append(Self.item(track, serial))
            guard id != loaded, seen.insert(id).inserted else { break }
            cursor = id
        }
        handover.set(current: loaded?.serial, upcoming: upcoming)
    }

    /// Lets the source of a track that is now heard know (the MIDI browser remembers it as the last choice).
    private func tellSource(_ metadata: TrackMetadata) {
        guard let url = URL(string: metadata.url), let plugin = plugins.first(where: { $0.canResolve(url) }) else { return }
        Task { await plugin.trackStarted(metadata) }
    }

    /// What the engine opens for a queue entry: the source's rendition when it made one.
    private static func item(_ track: Track, _ serial: UInt64) -> PlaybackItem {
        PlaybackItem(uri: track.metadata.streamURL ?? track.uri, token: serial,
                     seeksDespiteQuery: track.metadata.seeksDespiteQuery ?? false)
    }

    private func applyMetadataNow(_ id: TrackID, _ new: TrackMetadata) {
        guard var track = queue.track(id) else { return }
        var merged = new
        // The stream's own duration beats a probe's estimate.
        if merged.length == nil { merged.length = track.metadata.length }
        guard merged != track.metadata else { return }
        track.metadata = merged
        queue.updateMetadata(id, merged)
        eventSink.yield(.trackMetadataChanged(track))
        if id == queue.currentID { publish() }
        scheduleSave()
    }

    private func makeSnapshot() -> PlayerSnapshot {
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
        s.canSeek = hasCurrent && status != .stopped && canSeek
        s.trackIDs = queue.ids
        return s
    }

    private func publish() {
        let s = makeSnapshot()
        guard s != lastSnapshot else { return }
        lastSnapshot = s
        announcedSnapshot.withLock { $0 = s }
        eventSink.yield(.changed(s))
    }

    private func emitTick(position: Int64? = nil) {
        guard let id = loaded ?? queue.currentID else { return }
        eventSink.yield(.tick(id, position: position ?? self.position(), length: queue.track(id)?.metadata.length ?? 0))
    }

    private func startTicking() {
        tickGeneration += 1
        let generation = tickGeneration
        let interval = tickInterval
        Task { [weak self] in
            let clock = ContinuousClock()
            var deadline = clock.now
            while true {
                deadline = deadline.advanced(by: interval)
                // Behind schedule (a stalled or loaded machine): tick once now, not a burst of missed ticks.
                let now = clock.now
                if deadline < now { deadline = now }
                try? await Task.sleep(until: deadline, clock: clock)
                guard let self, await self.tick(generation) else { return }
            }
        }
    }

    private func tick(_ generation: Int) -> Bool {
        guard generation == tickGeneration, status == .playing else { return false }
        emitTick()
        return true
    }

    private func scheduleSave() {
        guard stateStore != nil, !saveScheduled else { return }
        saveScheduled = true
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(50))
            await self?.flushScheduledSave()
        }
    }

    private func flushScheduledSave() {
        saveScheduled = false
        save()
    }

    /// Every second while playing: only the position file when nothing else changed since the last save (comparing
    /// an unchanged queue is cheap: its storage is shared), else the whole state.
    private func saveIfPlaying() {
        guard status == .playing, let stateStore else { return }
        let state = persistedState()
        guard state.withoutPosition == savedApartFromPosition, let current = state.queue.currentID else {
            save()
            return
        }
        do { try stateStore.savePosition(state.position, of: current) } catch {
            logger.error("could not save the position: \(error)")
        }
    }
}

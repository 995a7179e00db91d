import CGStreamer
import Dispatch
import Foundation
import Logging
import Synchronization

/// The one place where C threads meet Swift: the playbin, its bus thread and the
/// `about-to-finish` callback. Everything the C threads touch is Sendable (Mutex/Atomic state,
/// the continuation, immutable pointers).
///
/// Ordering: all events are yielded by the bus thread only. Commands made on other threads
/// (load, stop, internal resets) bump `generation` and post a marker message on the bus; the
/// bus thread drops every message popped before the marker of the current generation, so a
/// stale EOS or error from a replaced item is never reported against the new one.
final class PipelineBridge: Sendable {
    nonisolated(unsafe) let playbin: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) let bus: UnsafeMutablePointer<GstBus>
    let usingNullSink: Bool
    let logger: Logger
    let prerollTimeout: Duration
    let events: AsyncStream<PlaybackEvent>
    private let continuation: AsyncStream<PlaybackEvent>.Continuation
    private let state = Mutex(BridgeState())
    private let provider = Mutex<(@Sendable (PlaybackItem) -> PlaybackItem?)?>(nil)
    private let isShutDown = Atomic<Bool>(false)
    private let busThreadDone = DispatchSemaphore(value: 0)
    private let busThreadID = Mutex<pthread_t?>(nil)
    private let handlerID = Atomic<UInt>(0)
    private let setupHandlerID = Atomic<UInt>(0)
    /// Properties for elements playbin creates, by factory name; read on streaming threads in `element-setup`.
    let elementSettings: [String: [String: String]]
    /// Serialises pipeline state commands (callers' and the bus thread's), so a reset decided
    /// on the bus thread never hits an item loaded meanwhile. Order: commandLock, then state.
    /// The streaming thread (about-to-finish) never takes it, so a state change may wait for
    /// streaming threads while holding it.
    private let commandLock = Mutex<Void>(())

    static let markerName = "tonearm-marker"
    static let rejectedName = "tonearm-rejected"
    static let wakeName = "tonearm-wake"

    init(sinkDescription: String, logger: Logger, prerollTimeout: Duration, elementSettings: [String: [String: String]] = [:]) throws {
        GStreamer.ensureInitialized()
        self.logger = logger
        self.elementSettings = elementSettings
        self.prerollTimeout = prerollTimeout
        let (sink, isNull) = try Self.makeSink(sinkDescription, logger: logger)
        defer { gst_object_unref(sink) }
        guard let playbin = gst_element_factory_make("playbin", "tonearm-playbin") else {
            throw PlaybackError(domain: "core", code: 4, message: "GStreamer's playbin element is missing (gstreamer1.0-plugins-base)")
        }
        _ = gst_object_ref_sink(playbin)
        // Audio only: ignore video and subtitle streams; volume in software so every sink has it.
        gst_util_set_object_arg(tn_object(playbin), "flags", "audio+soft-volume")
        tn_object_set_object(playbin, "audio-sink", sink)
        self.playbin = playbin
        self.bus = gst_element_get_bus(playbin)
        self.usingNullSink = isNull
        (events, continuation) = AsyncStream.makeStream(of: PlaybackEvent.self, bufferingPolicy: .unbounded)

        let callback: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            Unmanaged<PipelineBridge>.fromOpaque(data).takeUnretainedValue().aboutToFinish()
        }
        let id = tn_signal_connect(playbin, "about-to-finish", unsafeBitCast(callback, to: GCallback.self),
                                   Unmanaged.passUnretained(self).toOpaque())
        handlerID.store(id, ordering: .releasing)
        if !elementSettings.isEmpty {
            let setup: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, element, data in
                guard let element, let data else { return }
                Unmanaged<PipelineBridge>.fromOpaque(data).takeUnretainedValue().setUp(element)
            }
            let setupID = tn_signal_connect(playbin, "element-setup", unsafeBitCast(setup, to: GCallback.self),
                                            Unmanaged.passUnretained(self).toOpaque())
            setupHandlerID.store(setupID, ordering: .releasing)
        }

        let thread = Thread { [self] in
            self.busThreadID.withLock { $0 = pthread_self() }
            self.runBus()
            self.busThreadDone.signal()
        }
        thread.name = "tonearm-bus"
        thread.start()
    }

    deinit {
        shutdown()
        gst_object_unref(bus)
        gst_object_unref(playbin)
    }

    // MARK: - Sink

    /// Builds the audio sink bin. For the plain default `autoaudiosink`, checks what it picks:
    /// with no usable device it silently falls back to a fakesink; we then use our own
    /// clock-synchronised `fakesink sync=true` and say so once.
    /// Returns a non-floating reference the caller must unref.
    static func makeSink(_ description: String, logger: Logger) throws -> (UnsafeMutablePointer<GstElement>, Bool) {
        let desc = description.trimmingCharacters(in: .whitespacesAndNewlines)
        if desc == PlaybackEngine.defaultSink {
            if let auto = gst_element_factory_make("autoaudiosink", nil) {
                _ = gst_object_ref_sink(auto)
                var usable = false
                if gst_element_set_state(auto, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE,
                   let child = tn_bin_first_child(tn_bin(auto)) {
                    let name = tn_element_factory_name(child).map { String(cString: $0) } ?? ""
                    gst_object_unref(child)
                    usable = !(name.isEmpty || name.hasPrefix("fake"))
                    logger.debug("autoaudiosink picked \(name.isEmpty ? "nothing" : name)")
                }
                _ = gst_element_set_state(auto, GST_STATE_NULL)
                if usable { return (auto, false) }
                gst_object_unref(auto)
            }
            logger.notice("no audio device found; playing to a silent clock-synchronised null sink")
            return (try parseSink("fakesink sync=true"), true)
        }
        return (try parseSink(desc), desc.hasPrefix("fakesink") || desc.hasPrefix("fakeaudiosink"))
    }

    static func parseSink(_ desc: String) throws -> UnsafeMutablePointer<GstElement> {
        var error: UnsafeMutablePointer<GError>?
        let bin = gst_parse_bin_from_description_full(desc, 1, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error)
        guard let bin else {
            var e = GStreamer.consume(error, fallback: "could not build the sink")
            e.debug = e.message
            e.domain = "core"
            e.message = "invalid audio-sink description '\(desc)': \(e.debug ?? "")"
            throw e
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(bin)
        guard let pad = gst_element_get_static_pad(bin, "sink") else {
            gst_object_unref(bin)
            throw PlaybackError(domain: "core", code: 0,
                                message: "invalid audio-sink description '\(desc)': it has no unlinked sink pad to feed audio into")
        }
        gst_object_unref(pad)
        return bin
    }

    // MARK: - Commands (any thread)

    func setProvider(_ p: @escaping @Sendable (PlaybackItem) -> PlaybackItem?) {
        provider.withLock { $0 = p }
    }

    var currentItem: PlaybackItem? { state.withLock { $0.current } }
    var reportedState: PlaybackState { state.withLock { $0.reported ?? .stopped } }
    var rate: Double { state.withLock { $0.rate } }

    /// - Parameter reload: re-open the current item at `position` instead of seeking in it (a
    ///   seek after a gapless hand-over was prepared would jump into the next item in playbin):
    ///   no second `.started`, tags and duration kept, `.seekCompleted` at the end.
    func load(_ item: PlaybackItem, startPaused: Bool, at position: Int64, reload: Bool = false) {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in lockedLoad(item, startPaused: startPaused, at: position, reload: reload) }
    }

    private func lockedLoad(_ item: PlaybackItem, startPaused: Bool, at position: Int64, reload: Bool) {
        // New generation first: whatever the old item still posts is dropped. Then READY, which
        // waits for the streaming threads, so no about-to-finish runs after it. After an error
        // playbin may keep a broken source group ("Internal data stream error" on the next
        // item): NULL then.
        let fully = state.withLock { s -> Bool in
            s.generation += 1
            s.acceptsHandOver = false
            s.phase = .idle
            defer { s.dirty = false }
            return s.dirty
        }
        reset(fully: fully)
        let deadline = ContinuousClock.now.advanced(by: prerollTimeout)
        let (gen, needsPreroll) = state.withLock { s -> (UInt64, Bool) in
            s.generation += 1
            s.acceptsHandOver = true
            let (tags, duration) = (s.tags, s.lastDuration)
            s.current = item
            s.resetItem()
            if reload {
                s.tags = tags
                s.lastDuration = duration
                s.silentStart = true
            }
            s.phase = .prerolling(deadline)
            let seekAtStart = position > 0 || s.rate != 1
            s.startSeek = seekAtStart ? max(0, position) : nil
            s.startSeekReports = reload || position > 0
            s.playAfterStartSeek = !startPaused
            return (s.generation, seekAtStart)
        }
        postMarker(gen, announceStopped: false)
        tn_object_set_string(playbin, "uri", item.uri)
        let target = (startPaused || needsPreroll) ? GST_STATE_PAUSED : GST_STATE_PLAYING
        if gst_element_set_state(playbin, target) == GST_STATE_CHANGE_FAILURE {
            logger.debug("state change failed for \(item); waiting for the error message")
        }
    }

    func play() { resume(target: GST_STATE_PLAYING) }
    func pause() { resume(target: GST_STATE_PAUSED) }

    private func resume(target: GstState) {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in lockedResume(target: target) }
    }

    private func lockedResume(target: GstState) {
        let (item, phase) = state.withLock { ($0.current, $0.phase) }
        guard let item else { return }
        switch phase {
        case .idle, .finished:
            // Stopped, failed or at the end: start the item again from the beginning.
            lockedLoad(item, startPaused: target == GST_STATE_PAUSED, at: 0, reload: false)
        case .prerolling, .running:
            state.withLock { s in
                if case .prerolling = s.phase, s.startSeek != nil { s.playAfterStartSeek = target == GST_STATE_PLAYING }
            }
            if case .prerolling = phase, state.withLock({ $0.startSeek != nil }) {
                return // the bus thread sets the final state after the start seek
            }
            _ = gst_element_set_state(playbin, target)
        }
    }

    func stop() {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in
            let (gen, fully) = state.withLock { s -> (UInt64, Bool) in
                s.generation += 1
                s.resetItem()
                s.phase = .idle
                defer { s.dirty = false }
                return (s.generation, s.dirty)
            }
            reset(fully: fully)
            postMarker(gen, announceStopped: true)
        }
    }

    func seek(to nanoseconds: Int64) -> Bool {
        guard !isShutDown.load(ordering: .acquiring) else { return false }
        let position = max(0, nanoseconds)
        let (phase, rate) = state.withLock { s -> (Phase, Double) in
            if case .prerolling = s.phase { s.startSeek = position }
            return (s.phase, s.rate)
        }
        switch phase {
        case .idle: return false
        case .prerolling: return true
        case .running, .finished: break
        }
        guard tn_state_current(playbin).rawValue >= GST_STATE_PAUSED.rawValue else { return false }
        if currentItem?.seeksDespiteQuery != true, let seekable = querySeekable(), !seekable { return false }
        if reloadIfHandOverPrepared(at: position) { return true }
        return performSeek(position, rate: rate)
    }

    /// After about-to-finish has handed the next URI over, a flushing seek makes playbin drop
    /// the rest of the current item and play the next one. Re-open the current item at the
    /// position instead; about-to-finish will ask for the next item again.
    private func reloadIfHandOverPrepared(at position: Int64) -> Bool {
        // Checked and blocked in one step: no hand-over can slip in before the seek is issued.
        let (item, prepared) = state.withLock { s in
            let prepared = !s.pending.isEmpty
            if !prepared { s.seekIssuing = true }
            return (s.current, prepared)
        }
        guard prepared, let item else { return false }
        let paused = tn_state_target(playbin) != GST_STATE_PLAYING
        logger.debug("seek with a hand-over prepared: re-opening \(item) at \(position) ns")
        load(item, startPaused: paused, at: position, reload: true)
        return true
    }

    /// A flushing, accurate seek; the bus thread reports `.seekCompleted` at ASYNC_DONE
    /// (unless `silent`).
    private func performSeek(_ position: Int64, rate: Double, silent: Bool = false) -> Bool {
        state.withLock { s in
            s.seekInFlight = true
            s.seekIsSilent = silent
            if case .finished = s.phase { s.phase = .running } // seeking back after EOS plays again
        }
        let ok = issueSeek(position, rate: rate)
        if !ok { state.withLock { $0.seekInFlight = false } }
        return ok
    }

    private func issueSeek(_ position: Int64, rate: Double) -> Bool {
        state.withLock { $0.seekIssuing = true }
        defer { state.withLock { $0.seekIssuing = false } }
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        return gst_element_seek(playbin, rate, GST_FORMAT_TIME, flags,
                                GST_SEEK_TYPE_SET, gint64(position), GST_SEEK_TYPE_NONE, -1) != 0
    }

    func setRate(_ rate: Double) -> Bool {
        guard !isShutDown.load(ordering: .acquiring), rate.isFinite else { return false }
        let r = min(4, max(0.25, rate))
        let phase = state.withLock { s -> Phase in
            s.rate = r
            if case .prerolling = s.phase, s.startSeek == nil { s.startSeek = 0 }
            return s.phase
        }
        switch phase {
        case .idle: return true // applies at the next load
        case .prerolling: return true
        case .running, .finished: break
        }
        guard tn_state_current(playbin).rawValue >= GST_STATE_PAUSED.rawValue else { return true }
        let at = position ?? 0
        if reloadIfHandOverPrepared(at: at) { return true }
        return performSeek(at, rate: r)
    }

    var volume: Double { tn_object_get_double(playbin, "volume") }

    func setVolume(_ v: Double) {
        guard v.isFinite else { return }
        tn_object_set_double(playbin, "volume", min(10, max(0, v)))
    }

    var position: Int64? {
        var value: gint64 = 0
        guard gst_element_query_position(playbin, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return Int64(value)
    }

    var duration: Int64? {
        var value: gint64 = 0
        guard gst_element_query_duration(playbin, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return Int64(value)
    }

    func querySeekable() -> Bool? {
        guard let query = gst_query_new_seeking(GST_FORMAT_TIME) else { return nil }
        defer { gst_query_unref(query) }
        guard gst_element_query(playbin, query) != 0 else { return nil }
        var seekable: gboolean = 0
        gst_query_parse_seeking(query, nil, &seekable, nil, nil)
        return seekable != 0
    }

    var isSeekable: Bool {
        if let item = currentItem, item.seeksDespiteQuery { return true }
        return querySeekable() ?? false
    }

    func shutdown() {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        post(Self.wakeName, fields: "")
        let onBusThread = busThreadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !onBusThread { busThreadDone.wait() }
        _ = gst_element_set_state(playbin, GST_STATE_NULL)
        let id = handlerID.exchange(0, ordering: .acquiringAndReleasing)
        if id != 0 { g_signal_handler_disconnect(playbin, gulong(id)) }
        let setupID = setupHandlerID.exchange(0, ordering: .acquiringAndReleasing)
        if setupID != 0 { g_signal_handler_disconnect(playbin, gulong(setupID)) }
        continuation.finish()
    }

    // MARK: - Bus messages we post ourselves

    private func post(_ name: String, fields: String) {
        let text = fields.isEmpty ? name : "\(name), \(fields)"
        guard let structure = gst_structure_new_from_string(text),
              let message = gst_message_new_application(nil, structure) else { return }
        _ = gst_bus_post(bus, message)
    }

    /// READY, through NULL when `fully` (a broken source group is dropped only there). NULL flushes the pipeline's
    /// bus (auto-flush-bus) and it drops whatever is posted until the pipeline leaves NULL: a generation marker posted
    /// then was lost, and with it every message of the next item (a load that won the race with the bus thread after
    /// a failed hand-over hung for good). READY before any marker.
    private func reset(fully: Bool) {
        if fully { _ = gst_element_set_state(playbin, GST_STATE_NULL) }
        _ = gst_element_set_state(playbin, GST_STATE_READY)
    }

    private func postMarker(_ generation: UInt64, announceStopped: Bool) {
        post(Self.markerName, fields: "gen=(guint64)\(generation), stopped=(boolean)\(announceStopped ? "true" : "false")")
    }

    /// Runs `body` under the command lock if nothing was loaded or stopped since generation
    /// `gen` (bus-thread actions decided on an older state are dropped).
    private func ifStill(_ gen: UInt64, _ body: () -> Void) {
        commandLock.withLock { _ in
            guard state.withLock({ $0.generation == gen }) else { return }
            body()
        }
    }

    /// Internal reset after a failure or a stalled drain: NULL (READY is not enough after an
    /// error: playbin keeps a broken source group), new generation, no state event. Skipped
    /// when something else was loaded since generation `gen`.
    private func resetToReady(ifStill gen: UInt64) {
        ifStill(gen) {
            let next = state.withLock { s -> UInt64 in
                s.generation += 1
                s.pending = []
                s.draining = nil
                s.seekInFlight = false
                s.startSeek = nil
                s.dirty = false
                return s.generation
            }
            reset(fully: true)
            postMarker(next, announceStopped: false)
        }
    }

    // MARK: - element-setup (GStreamer streaming thread)

    /// Applies `elementSettings` to an element playbin just created (the SoundFont of fluiddec).
    private func setUp(_ element: UnsafeMutablePointer<GstElement>) {
        guard let name = tn_element_factory_name(element).map({ String(cString: $0) }),
              let settings = elementSettings[name] else { return }
        for (property, value) in settings {
            gst_util_set_object_arg(tn_object(element), property, value)
            logger.debug("\(name): \(property) = \(value)")
        }
    }

    // MARK: - about-to-finish (GStreamer streaming thread)

    private func aboutToFinish() {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        let (finishing, gen) = state.withLock { s in (s.pending.last ?? s.current, s.generation) }
        // A hand-over made before a flushing seek has gone through makes playbin play the next
        // item from the seek position. So none from the moment a seek is decided until
        // gst_element_seek returns; about-to-finish fires again once the item drains after the
        // seek. (If that drain happened inside gst_element_seek, as with a seek into the last
        // second or a very short file, this item ends with EOS → .finished instead: not
        // gapless, but never the wrong item.)
        if state.withLock({ $0.startSeek != nil || $0.seekIssuing }) {
            logger.debug("about-to-finish during a seek: no hand-over")
            return
        }
        guard let finishing, let provider = provider.withLock({ $0 }) else { return }
        guard let next = provider(finishing) else { return }
        if let problem = Self.precheck(next.uri, typefind: true) {
            // Handing over a missing file stalls the pipeline; refuse it now and let the
            // current item end normally (EOS → .finished).
            let accepted = state.withLock { s -> Bool in
                guard s.generation == gen, s.acceptsHandOver else { return false }
                s.rejected.append((next, problem))
                return true
            }
            if accepted { post(Self.rejectedName, fields: "gen=(guint64)\(gen)") }
            return
        }
        // Checked again in the same step as the hand-over is recorded: a seek decided since the
        // first check sees either this pending item (and re-opens instead) or blocks it here.
        let accepted = state.withLock { s -> Bool in
            guard s.generation == gen, s.acceptsHandOver, s.startSeek == nil, !s.seekIssuing else { return false }
            s.pending.append(next)
            return true
        }
        if accepted {
            logger.debug("gapless hand-over \(finishing) → \(next)")
            tn_object_set_string(playbin, "uri", next.uri)
            post(Self.wakeName, fields: "")  // the bus thread watches the hand-over from now on
        }
    }

    /// Cheap check of a file URI before a gapless hand-over: it must exist, be readable and
    /// (with `typefind`) its first 64 KiB must look like media. A bad next item handed over
    /// stalls playbin, sometimes before the current item is even heard.
    static func precheck(_ uri: String, typefind: Bool = false) -> PlaybackError? {
        guard uri.hasPrefix("file:") else { return nil }
        guard let path = g_filename_from_uri(uri, nil, nil) else {
            return PlaybackError(domain: "resource", code: 3, message: "Resource not found.", debug: "invalid file URI: \(uri)")
        }
        defer { g_free(path) }
        if access(path, R_OK) != 0 {
            return PlaybackError(domain: "resource", code: errno == EACCES ? 6 : 3,
                                 message: errno == EACCES ? "Could not open resource for reading." : "Resource not found.",
                                 debug: "\(String(cString: path)): \(String(cString: strerror(errno)))")
        }
        guard typefind else { return nil }
        var probability: guint = 0
        guard let name = tn_typefind_file(path, 65_536, &probability) else {
            // GST_STREAM_ERROR_TYPE_NOT_FOUND, as playback would report it.
            return PlaybackError(domain: "stream", code: 4, message: "Could not determine type of stream.",
                                 debug: "typefind found nothing in \(String(cString: path))")
        }
        defer { g_free(name) }
        let type = String(cString: name)
        if type.hasPrefix("image/") || type.hasPrefix("text/") || type.hasPrefix("video/x-raw") {
            // GST_STREAM_ERROR_WRONG_TYPE
            return PlaybackError(domain: "stream", code: 6, message: "Not an audio file (\(type)).",
                                 debug: String(cString: path))
        }
        return nil
    }

    // MARK: - Bus thread

    private func runBus() {
        let types: [GstMessageType] = [GST_MESSAGE_EOS, GST_MESSAGE_ERROR, GST_MESSAGE_WARNING, GST_MESSAGE_STATE_CHANGED,
                                       GST_MESSAGE_ASYNC_DONE, GST_MESSAGE_STREAM_START, GST_MESSAGE_TAG,
                                       GST_MESSAGE_DURATION_CHANGED, GST_MESSAGE_APPLICATION, GST_MESSAGE_BUFFERING]
        let mask = GstMessageType(rawValue: types.reduce(0) { $0 | $1.rawValue })
        while !isShutDown.load(ordering: .acquiring) {
            // 50 ms while something is watched (a preroll's deadline, a hand-over, a drain), else 1 s: an idle or
            // steadily playing daemon wakes once a second, not twenty times. Whatever starts a watch from another
            // thread posts a message, which wakes this one at once.
            let watching = state.withLock { s -> Bool in
                if case .prerolling = s.phase { return true }
                return s.draining != nil || s.handOverWatch != nil || !s.pending.isEmpty
            }
            let timeout = (watching ? 50 : 1000) * tn_msecond()
            if let message = gst_bus_timed_pop_filtered(bus, timeout, mask) {
                handle(message)
                gst_message_unref(message)
            }
            tick()
        }
    }

    private func emit(_ events: [PlaybackEvent]) {
        for event in events { continuation.yield(event) }
    }

    private func isFromPlaybin(_ message: UnsafeMutablePointer<GstMessage>) -> Bool {
        guard let src = message.pointee.src else { return false }
        return OpaquePointer(src) == OpaquePointer(playbin)
    }

    private func handle(_ message: UnsafeMutablePointer<GstMessage>) {
        let type = message.pointee.type
        if type == GST_MESSAGE_APPLICATION {
            handleApplication(message)
            return
        }
        // Drop whatever was posted before the current generation's marker.
        guard state.withLock({ $0.busGeneration == $0.generation }) else { return }
        switch type {
        case GST_MESSAGE_STATE_CHANGED:
            guard isFromPlaybin(message) else { return }
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            guard pending == GST_STATE_VOID_PENDING, new == tn_state_target(playbin) else { return }
            let event = state.withLock { s -> PlaybackEvent? in
                guard !s.seekInFlight, s.startSeek == nil, !s.buffering else { return nil }
                return s.report(Self.mapState(new))
            }
            emit(event.map { [$0] } ?? [])

        case GST_MESSAGE_ASYNC_DONE:
            handleAsyncDone()

        case GST_MESSAGE_STREAM_START:
            // playbin gives every source group (URI) its own group id. A flushing seek makes the
            // sink see the same stream-start again (same group id): that is not a new item.
            var groupID: guint = 0
            let hasGroup = gst_message_parse_group_id(message, &groupID) != 0
            let group: UInt32? = hasGroup ? UInt32(groupID) : nil
            var rateToApply: Double?
            let event = state.withLock { s -> PlaybackEvent? in
                if !s.started, let current = s.current {
                    s.started = true
                    s.currentGroup = group
                    if s.silentStart {
                        s.silentStart = false
                        return nil
                    }
                    return .started(current)
                }
                if let group, group == s.currentGroup { return nil }
                if group == nil, s.seekInFlight { return nil }
                guard !s.pending.isEmpty else { return nil }
                let next = s.pending.removeFirst()
                s.currentGroup = group
                s.current = next
                s.tags = StreamTags()
                s.lastDuration = nil
                if s.rate != 1 { rateToApply = s.rate }
                return .started(next)
            }
            if let event {
                if case .started(let item) = event { logger.debug("started \(item)") }
                emit([event] + durationEvents())
            }
            if let rateToApply {
                // playbin starts every new stream at rate 1: carry the rate over (the stream has
                // just started; the position query may still answer for the previous one).
                _ = performSeek(0, rate: rateToApply, silent: true)
            }

        case GST_MESSAGE_DURATION_CHANGED:
            emit(durationEvents())

        case GST_MESSAGE_TAG:
            guard let src = message.pointee.src, tn_is_sink_element(src) != 0 else { return }
            var list: UnsafeMutablePointer<GstTagList>?
            gst_message_parse_tag(message, &list)
            guard let list else { return }
            let tags = GStreamer.streamTags(list)
            gst_tag_list_unref(list)
            guard !tags.isEmpty else { return }
            let event = state.withLock { s -> PlaybackEvent? in
                guard let current = s.current else { return nil }
                let merged = s.tags.merging(tags)
                guard merged != s.tags else { return nil }
                s.tags = merged
                return .tags(current, merged)
            }
            emit(event.map { [$0] } ?? [])

        case GST_MESSAGE_EOS:
            let event = state.withLock { s -> PlaybackEvent? in
                guard let current = s.current else { return nil }
                switch s.phase {
                case .idle, .finished: return nil
                case .prerolling, .running: break
                }
                s.phase = .finished
                s.draining = nil
                s.pending = []
                return .finished(current)
            }
            if let event {
                logger.debug("finished (EOS)")
                emit([event])
            }

        case GST_MESSAGE_ERROR:
            handleError(GStreamer.parseError(message), source: message.pointee.src)

        case GST_MESSAGE_WARNING:
            let warning = GStreamer.parseError(message, warning: true)
            logger.debug("GStreamer warning: \(warning.message) (\(warning.debug ?? ""))")

        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            handleBuffering(Int(percent))

        default:
            break
        }
    }

    private func handleApplication(_ message: UnsafeMutablePointer<GstMessage>) {
        guard let structure = gst_message_get_structure(message), let cname = gst_structure_get_name(structure) else { return }
        let name = String(cString: cname)
        var gen: guint64 = 0
        _ = gst_structure_get_uint64(structure, "gen", &gen)
        switch name {
        case Self.markerName:
            var stopped: gboolean = 0
            _ = gst_structure_get_boolean(structure, "stopped", &stopped)
            let event = state.withLock { s -> PlaybackEvent? in
                s.busGeneration = UInt64(gen)
                guard stopped != 0, s.generation == UInt64(gen) else { return nil }
                return s.report(.stopped)
            }
            emit(event.map { [$0] } ?? [])
        case Self.rejectedName:
            let events = state.withLock { s -> [PlaybackEvent] in
                guard s.generation == UInt64(gen), s.busGeneration == s.generation else { return [] }
                defer { s.rejected = [] }
                return s.rejected.map { .failed($0.0, $0.1) }
            }
            for case .failed(let item, let error) in events {
                logger.info("next item \(item) refused before hand-over: \(error)")
            }
            emit(events)
        default:
            break
        }
    }

    private func handleAsyncDone() {
        enum Action { case none, startSeek(Int64, Double), setState(GstState) }
        var action = Action.none
        var events: [PlaybackEvent] = []
        let position = self.position ?? 0
        var gen: UInt64 = 0
        state.withLock { s in
            gen = s.generation
            if case .prerolling = s.phase {
                s.phase = .running
                if let seek = s.startSeek {
                    s.startSeek = nil
                    s.seekIssuing = true // until issueSeek returns
                    s.seekInFlight = true
                    s.seekIsSilent = !s.startSeekReports
                    s.startSeekInFlight = true
                    action = .startSeek(seek, s.rate)
                }
                return
            }
            guard s.seekInFlight else { return }
            s.seekInFlight = false
            if s.startSeekInFlight {
                s.startSeekInFlight = false
                if s.playAfterStartSeek { action = .setState(GST_STATE_PLAYING) }
            }
            if let current = s.current, !s.seekIsSilent {
                events.append(.seekCompleted(current, position))
            }
            s.seekIsSilent = false
        }
        switch action {
        case .none: break
        case .startSeek(let position, let rate):
            ifStill(gen) {
                guard !issueSeek(position, rate: rate) else { return }
                // Unseekable (e.g. MIDI): start from the beginning instead.
                logger.debug("start seek to \(position) ns refused; starting at 0")
                let play = state.withLock { s -> Bool in
                    s.seekInFlight = false
                    s.startSeekInFlight = false
                    return s.playAfterStartSeek
                }
                if play { _ = gst_element_set_state(playbin, GST_STATE_PLAYING) }
            }
        case .setState(let target):
            ifStill(gen) { _ = gst_element_set_state(playbin, target) }
        }
        events += durationEvents()
        // A settled pipeline whose state equals its target: report it (deduplicated).
        let current = tn_state_current(playbin)
        if current == tn_state_target(playbin) {
            let event = state.withLock { s -> PlaybackEvent? in
                guard !s.seekInFlight, s.startSeek == nil, !s.buffering else { return nil }
                if case .running = s.phase { return s.report(Self.mapState(current)) }
                return nil
            }
            if let event { events.append(event) }
        }
        emit(events)
    }

    private func handleError(_ error: PlaybackError, source: UnsafeMutablePointer<GstObject>?) {
        enum Outcome { case ignore, nextFailed(PlaybackItem), currentFailed(PlaybackItem, UInt64) }
        let sourcePath = source.flatMap { src -> String? in
            guard let p = tn_object_path(src) else { return nil }
            defer { g_free(p) }
            return String(cString: p)
        } ?? "?"
        let outcome = state.withLock { s -> Outcome in
            s.dirty = true
            if s.draining != nil { return .ignore } // more errors from the refused next item
            if !s.pending.isEmpty {
                let bad = s.pending.removeFirst()
                s.pending = []
                s.draining = Drain(lastPosition: nil, lastAdvance: .now, duration: s.lastDuration ?? nil)
                return .nextFailed(bad)
            }
            guard let current = s.current else { return .ignore }
            switch s.phase {
            case .idle, .finished: return .ignore
            case .prerolling, .running:
                s.phase = .idle
                return .currentFailed(current, s.generation)
            }
        }
        switch outcome {
        case .ignore:
            logger.debug("ignored error from \(sourcePath): \(error)")
        case .nextFailed(let item):
            logger.info("next item \(item) failed during gapless hand-over (\(error)); letting the current item finish")
            emit([.failed(item, error)])
        case .currentFailed(let item, let gen):
            logger.info("\(item) failed: \(error) [\(sourcePath)]")
            emit([.failed(item, error)])
            resetToReady(ifStill: gen)
        }
    }

    private func handleBuffering(_ percent: Int) {
        let target = tn_state_target(playbin)
        let (change, gen) = state.withLock { s -> (GstState?, UInt64) in
            if percent < 100, !s.buffering, target == GST_STATE_PLAYING, case .running = s.phase {
                s.buffering = true
                return (GST_STATE_PAUSED, s.generation)
            }
            if percent >= 100, s.buffering {
                s.buffering = false
                return (GST_STATE_PLAYING, s.generation)
            }
            return (nil, s.generation)
        }
        if let change { ifStill(gen) { _ = gst_element_set_state(playbin, change) } }
    }

    private func durationEvents() -> [PlaybackEvent] {
        let d = duration
        return state.withLock { s -> [PlaybackEvent] in
            guard let current = s.current, s.started, s.draining == nil, s.pending.isEmpty else { return [] }
            if let last = s.lastDuration, last == d { return [] }
            s.lastDuration = .some(d)
            return [.durationChanged(current, d)]
        }
    }

    /// Runs after every pop (a message, or 50 ms / 1 s without one): preroll deadline, drain watch.
    private func tick() {
        let (sameGen, draining, prerollExpired) = state.withLock { s -> (Bool, Bool, Bool) in
            let same = s.busGeneration == s.generation
            var expired = false
            if case .prerolling(let deadline) = s.phase, ContinuousClock.now >= deadline { expired = true }
            // A hand-over that neither starts nor fails (a truncated file can stall playbin with
            // no error): watch it like a failed one.
            if s.draining == nil, !s.pending.isEmpty, !s.seekInFlight, !s.buffering {
                if s.handOverWatch == nil {
                    s.handOverWatch = Drain(lastPosition: nil, lastAdvance: .now, duration: s.lastDuration ?? nil)
                }
            } else {
                s.handOverWatch = nil
            }
            return (same, s.draining != nil || s.handOverWatch != nil, expired)
        }
        guard sameGen else { return }
        if prerollExpired {
            let (item, gen) = state.withLock { s -> (PlaybackItem?, UInt64) in
                guard case .prerolling = s.phase else { return (nil, s.generation) }
                s.phase = .idle
                return (s.current, s.generation)
            }
            if let item {
                let seconds = Double(prerollTimeout.components.seconds) + Double(prerollTimeout.components.attoseconds) / 1e18
                let error = PlaybackError.timedOut(seconds)
                logger.info("\(item) failed: \(error)")
                emit([.failed(item, error)])
                resetToReady(ifStill: gen)
            }
            return
        }
        guard draining else { return }
        // A failed hand-over: the current item keeps playing but no EOS will come.
        // Target, not current state: a sink without sync can render everything while the
        // pipeline is still on its way to PLAYING.
        let playing = tn_state_target(playbin) == GST_STATE_PLAYING
        let pos = position
        var gen: UInt64 = 0
        var stuckNext: PlaybackItem?
        let finished = state.withLock { s -> PlaybackItem? in
            gen = s.generation
            let watchingHandOver = s.draining == nil
            guard var drain = s.draining ?? s.handOverWatch, let current = s.current else { return nil }
            let now = ContinuousClock.now
            func store() { if watchingHandOver { s.handOverWatch = drain } else { s.draining = drain } }
            if !playing {
                drain.lastAdvance = now
                store()
                return nil
            }
            if pos != drain.lastPosition {
                drain.lastPosition = pos
                drain.lastAdvance = now
            }
            store()
            if watchingHandOver {
                // Normal gapless playback keeps the position moving until STREAM_START.
                guard now - drain.lastAdvance > .seconds(1) else { return nil }
                stuckNext = s.pending.first
                s.pending = []
                s.handOverWatch = nil
                s.phase = .finished
                return current
            }
            // The duration as known before the hand-over: a duration query now may answer for
            // the failed next item.
            let atEnd = pos != nil && drain.duration != nil && pos! >= drain.duration! - 20_000_000
            let stalled = now - drain.lastAdvance > .milliseconds(600)
            guard atEnd || stalled else { return nil }
            s.draining = nil
            s.phase = .finished
            return current
        }
        if let finished {
            var events: [PlaybackEvent] = []
            if let stuckNext {
                logger.info("next item \(stuckNext) never started after the hand-over; giving up on it")
                events.append(.failed(stuckNext, PlaybackError(domain: "stream", code: 1,
                                                               message: "The stream stalled before it started.")))
            }
            logger.debug("finished \(finished) after a failed hand-over")
            emit(events + [.finished(finished)])
            resetToReady(ifStill: gen)
        }
    }

    static func mapState(_ state: GstState) -> PlaybackState {
        switch state {
        case GST_STATE_PLAYING: return .playing
        case GST_STATE_PAUSED: return .paused
        default: return .stopped
        }
    }
}

// MARK: - State

enum Phase {
    /// Nothing loaded, stopped, or the current item failed.
    case idle
    /// Waiting for the first preroll (ASYNC_DONE) before the deadline.
    case prerolling(ContinuousClock.Instant)
    case running
    /// EOS reached (or a stalled drain ended): waiting for load/stop.
    case finished
}

struct Drain {
    var lastPosition: Int64?
    var lastAdvance: ContinuousClock.Instant
    /// The current item's duration when the hand-over failed.
    var duration: Int64?
}

struct BridgeState {
    var generation: UInt64 = 0
    var busGeneration: UInt64 = 0
    var current: PlaybackItem?
    /// Items handed over in about-to-finish that have not started yet (oldest first).
    var pending: [PlaybackItem] = []
    /// Next items refused before the hand-over (missing file), to report as failed.
    var rejected: [(PlaybackItem, PlaybackError)] = []
    var started = false
    /// The stream-start group id of the current item, when playbin gave one.
    var currentGroup: UInt32?
    var phase: Phase = .idle
    var startSeek: Int64?
    /// Whether the start seek ends with `.seekCompleted` (a restore or a reload, not a bare rate).
    var startSeekReports = false
    var startSeekInFlight = false
    /// Internal seek (rate carried over a hand-over): no `.seekCompleted`.
    var seekIsSilent = false
    /// A seek is decided and gst_element_seek has not returned yet: no hand-over meanwhile.
    var seekIssuing = false
    /// A reload of the same item: its STREAM_START is not a new `.started`.
    var silentStart = false
    var playAfterStartSeek = true
    var seekInFlight = false
    var buffering = false
    var rate: Double = 1
    var reported: PlaybackState? = .stopped
    /// An error happened since the last NULL: the next load/stop goes through NULL.
    var dirty = false
    /// False while a load is replacing the item: about-to-finish must not hand over.
    var acceptsHandOver = true
    var lastDuration: Int64??
    var tags = StreamTags()
    var draining: Drain?
    /// Progress watch while a hand-over is pending (see `tick`).
    var handOverWatch: Drain?

    mutating func resetItem() {
        pending = []
        rejected = []
        started = false
        currentGroup = nil
        startSeek = nil
        startSeekInFlight = false
        startSeekReports = false
        seekInFlight = false
        seekIsSilent = false
        seekIssuing = false
        silentStart = false
        buffering = false
        lastDuration = nil
        tags = StreamTags()
        draining = nil
        handOverWatch = nil
    }

    /// The event for a newly reached state, or nil when it was already reported.
    mutating func report(_ state: PlaybackState) -> PlaybackEvent? {
        guard reported != state else { return nil }
        reported = state
        return .stateChanged(state)
    }
}

import CGStreamer
import CLinux
import Dispatch
import Foundation
import Logging
import Synchronization

/// The thin C side around one playbin: turns GStreamer's bus messages and `about-to-finish` into inputs of the
/// `PlaybackMachine`, and performs the effects it returns. It decides nothing itself.
///
/// Threads: callers' commands and the bus thread both feed the machine under `commandLock`, so a decision and the
/// pipeline calls it asks for happen together and never interleave with another's; the one exception, Play's and
/// Pause's state change, runs on `StateChangeThread` after the decision (and after the caller's announcement, with
/// `send(_:announcing:)`), and whoever takes `commandLock` next waits for it.
/// `about-to-finish` runs on a streaming thread that must not wait for a command (a READY waits for streaming threads):
/// it takes only the machine's own lock.
final class PipelineShell: Sendable {
    nonisolated(unsafe) let playbin: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) let bus: UnsafeMutablePointer<GstBus>
    /// The sink playbin plays into: the current output's, or the silent stand-in while that output is lost. Replaced
    /// only under `commandLock`.
    private let sink: Mutex<OutputSink>
    /// The per-stream ReplayGain filter (playbin's audio-filter).
    let streamGain: StreamGain
    /// The graphic equalizer, in the filter only while it is on.
    let equalizer: Equalizer
    /// The crossfade, inside that filter.
    let crossfader: Crossfader
    /// Last in the filter: the sink gets a tenth of a second at a time.
    let period: AudioPeriod
    let logger: Logger
    let reports: AsyncStream<PlaybackReport>
    private let continuation: AsyncStream<PlaybackReport>.Continuation
    private let machine: Mutex<PlaybackMachine>
    private let commandLock = Mutex<Void>(())
    /// Where Play's and Pause's state changes run, so that their caller has the new status at once instead of waiting
    /// for playbin's PLAYING ↔ PAUSED (a few hundred µs that every face's answer would wait for). Whatever takes
    /// `commandLock` next lets them finish first (`settle`), so GStreamer still sees every command in order.
    private var stateChanges: StateChangeThread { .shared }
    /// Play's and Pause's state changes decided but not yet handed to `stateChanges`.
    private let heldStateChanges = Mutex<[@Sendable () -> Void]>([])
    /// Boxed: a closure kept directly in a Mutex is wrapped in two more reabstraction thunks at every `withLock`
    /// (the inout write-back), so each about-to-finish made the next call deeper until a stack overflowed.
    private final class Provider: Sendable {
        let next: @Sendable (PlaybackItem) -> PlaybackItem?
        init(_ next: @escaping @Sendable (PlaybackItem) -> PlaybackItem?) { self.next = next }
    }
    private let provider = Mutex<Provider?>(nil)
    private let isShutDown = Atomic<Bool>(false)
    private let busThreadDone = DispatchSemaphore(value: 0)
    private let busThreadID = Mutex<pthread_t?>(nil)
    private let handlerID = Atomic<UInt>(0)
    private let setupHandlerID = Atomic<UInt>(0)
    /// Properties for elements playbin creates, by factory name; read on streaming threads in `element-setup`.
    let elementSettings: [String: [String: String]]

    static let markerName = "tonearm-marker"
    static let rejectedName = "tonearm-rejected"
    static let wakeName = "tonearm-wake"
    static let seekName = "tonearm-seek"

    /// An output that cannot be opened now (no reader, no server) does not stop the engine: it starts on the silent
    /// stand-in and reports `.outputFailed` first. An invalid description throws.
    init(output: AudioOutput, logger: Logger, prerollTimeout: Duration, elementSettings: [String: [String: String]] = [:]) throws {
        GStreamer.ensureInitialized()
        self.logger = logger
        self.elementSettings = elementSettings
        machine = Mutex(PlaybackMachine(prerollTimeout: prerollTimeout))
        var unavailable: PlaybackError?
        let first: OutputSink
        do {
            first = try OutputSink.open(output, logger: logger)
        } catch let error as PlaybackError where error.domain == OutputConnection.domain {
            unavailable = error
            first = try OutputSink.parking(for: output)
        }
        sink = Mutex(first)
        guard let playbin = gst_element_factory_make("playbin", "tonearm-playbin") else {
            throw PlaybackError(domain: "core", code: 4, message: "GStreamer's playbin element is missing (gstreamer1.0-plugins-base)")
        }
        _ = gst_object_ref_sink(playbin)
        // Audio only: ignore video and subtitle streams; volume in software so every sink has it.
        gst_util_set_object_arg(tn_object(playbin), "flags", "audio+soft-volume")
        tn_object_set_object(playbin, "audio-sink", first.element)
        do {
            streamGain = try StreamGain()
            guard let caps = streamGain.mixingCaps else {
                throw PlaybackError(domain: "core", code: 0, message: "the filter chain has no mixing capsfilter")
            }
            crossfader = try Crossfader(capsFilter: caps)
            gst_object_unref(caps)
            streamGain.insertAfterMixingFormat(crossfader.element)
            period = try AudioPeriod()
            streamGain.appendLast(period.element)
            // After the crossfade: it goes in just before tonearm-out, after whatever feeds it then.
            equalizer = try Equalizer(filter: streamGain.bin)
        } catch {
            gst_object_unref(playbin)
            throw error
        }
        tn_object_set_object(playbin, "audio-filter", streamGain.bin)
        self.playbin = playbin
        self.bus = gst_element_get_bus(playbin)
        tn_bus_keep_only_read(bus, playbin, Self.readMessages)
        (reports, continuation) = AsyncStream.makeStream(of: PlaybackReport.self, bufferingPolicy: .unbounded)
        if let unavailable {
            logger.error("the output \(output.name) cannot be opened: \(unavailable.message)")
            continuation.yield(PlaybackReport(.outputFailed(output, unavailable, wasPlaying: false)))
        }

        let callback: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            Unmanaged<PipelineShell>.fromOpaque(data).takeUnretainedValue().aboutToFinish()
        }
        let id = tn_signal_connect(playbin, "about-to-finish", unsafeBitCast(callback, to: GCallback.self),
                                   Unmanaged.passUnretained(self).toOpaque())
        handlerID.store(id, ordering: .releasing)
        if !elementSettings.isEmpty {
            let setup: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, element, data in
                guard let element, let data else { return }
                Unmanaged<PipelineShell>.fromOpaque(data).takeUnretainedValue().setUp(element)
            }
            let setupID = tn_signal_connect(playbin, "element-setup", unsafeBitCast(setup, to: GCallback.self),
                                            Unmanaged.passUnretained(self).toOpaque())
            setupHandlerID.store(setupID, ordering: .releasing)
        }

        let thread = Thread { [self] in
            _ = tn_name_this_thread("tonearm-bus")
            self.busThreadID.withLock { $0 = pthread_self() }
            self.runBus()
            self.busThreadDone.signal()
        }
        thread.start()
    }

    deinit {
        shutdown()
        gst_object_unref(bus)
        gst_object_unref(playbin)
    }

    // MARK: - Reading (any thread)

    var snapshot: PlaybackMachine.Snapshot { machine.withLock { $0.snapshot } }
    var status: PlaybackState { machine.withLock { $0.status } }
    var itemToken: UInt64? { machine.withLock { $0.itemToken } }
    var currentItem: PlaybackItem? { machine.withLock { $0.currentItem } }
    var reportedState: PlaybackState { machine.withLock { $0.reportedState } }

    /// The position clients should read (ns): the target of a seek not settled yet, 0 while a load from the start
    /// prerolls, else the pipeline's; 0 when stopped. While the pipeline cannot answer for a moment (a state change,
    /// a buffering pause), where it was last known in the same generation: a failed query is not a jump back to the
    /// start, and a re-open of the same item is not where the last one was.
    var reportedPosition: Int64 {
        let s = snapshot
        guard s.item != nil else { return 0 }
        if s.prerollingFromStart { return 0 }
        if let known = s.positionOverride ?? heldPosition.withLock({ $0?.position }) ?? position {
            let value = max(0, known)
            lastKnownPosition.withLock { $0 = (s.generation, value) }
            return value
        }
        return lastKnownPosition.withLock { $0?.generation == s.generation ? $0?.position : nil } ?? 0
    }
    private let lastKnownPosition = Mutex<(generation: UInt64, position: Int64)?>(nil)
    /// Where the pipeline was when a Play or a Pause was taken, until its state change is done: a position query
    /// meanwhile waits for the sink, which the state change holds (the tick and the position basis published with the
    /// new status waited 0.2 ms for it, while the state change took a CPU the faces' threads needed).
    private let heldPosition = Mutex<(token: UInt64, position: Int64)?>(nil)
    private let heldTokens = Atomic<UInt64>(0)

    var volume: Double { tn_object_get_double(playbin, "volume") }

    /// The output audio goes to (also while it is lost and the stand-in plays instead).
    var output: AudioOutput { sink.withLock { $0.output } }
    /// Whether what plays is heard nowhere: no audio device, or the output is lost.
    var usingNullSink: Bool { sink.withLock { $0.isNull } }

    // MARK: - Outputs

    /// Puts `new` in place of the current sink, keeping the item and its position: playbin goes through NULL (the
    /// old sink lets go of its device, FIFO or socket), then the item is re-opened where it was, held paused when
    /// `paused`, else as it was.
    func useSink(_ new: OutputSink, paused: Bool?) {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in
            settle()
            swapSink(to: new, paused: paused)
        }
    }

    /// Puts `output`, which could not be opened, in place of the current one: a silent stand-in plays for it, paused,
    /// and `.outputFailed` says why, as for an output lost while playing.
    func park(on output: AudioOutput, because error: PlaybackError, wasPlaying: Bool) {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in
            settle()
            parkLocked(on: output, because: error, wasPlaying: wasPlaying)
        }
    }

    /// Must hold `commandLock`.
    private func parkLocked(on output: AudioOutput, because error: PlaybackError, wasPlaying: Bool) {
        let parked: OutputSink
        do {
            parked = try OutputSink.parking(for: output)
        } catch {
            logger.error("cannot build the stand-in sink: \(error)")
            return
        }
        logger.error("the output \(output.name) failed: \(error.message) (\(error.debug ?? ""))")
        swapSink(to: parked, paused: true)
        continuation.yield(PlaybackReport(.outputFailed(output, error, wasPlaying: wasPlaying)))
    }

    /// Must hold `commandLock`.
    private func swapSink(to new: OutputSink, paused: Bool?) {
        let position = reportedPosition
        _ = gst_element_set_state(playbin, GST_STATE_NULL)
        tn_object_set_object(playbin, "audio-sink", new.element)
        let old = sink.withLock { current in
            let old = current
            current = new
            return old
        }
        _ = apply(.reopen(at: position, paused: paused, now: .now))
        // Released here, in NULL and out of playbin: its descriptor closes with it.
        withExtendedLifetime(old) {}
    }

    /// The output's sink posted an error (snapserver went away: EPIPE; a device unplugged). The track is not at
    /// fault: playback moves to the silent stand-in, paused where it was, and the player is told, to reconnect.
    private func outputFailed(_ error: PlaybackError, from source: UnsafeMutablePointer<GstObject>) {
        commandLock.withLock { _ in
            settle()
            let failing = sink.withLock { $0 }
            // Switched away meanwhile: that sink's errors are stale.
            guard !failing.isParked, failing.contains(source) else { return }
            let wasPlaying = machine.withLock { $0.snapshot.status == .playing }
            parkLocked(on: failing.output, because: error, wasPlaying: wasPlaying)
        }
    }

    /// Whether a bus message comes from inside the current sink.
    private func isFromSink(_ message: UnsafeMutablePointer<GstMessage>) -> UnsafeMutablePointer<GstObject>? {
        guard let src = message.pointee.src else { return nil }
        return sink.withLock { $0.contains(src) } ? src : nil
    }

    func setVolume(_ v: Double) {
        guard v.isFinite else { return }
        tn_object_set_double(playbin, "volume", min(10, max(0, v)))
    }

    /// The pipeline's own position in ns; nil when unknown.
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

    func setProvider(_ p: @escaping @Sendable (PlaybackItem) -> PlaybackItem?) {
        provider.withLock { $0 = Provider(p) }
    }

    /// What the provider hands over after `finishing`; nil without a provider.
    func nextItem(after finishing: PlaybackItem) -> PlaybackItem? {
        provider.withLock { $0 }?.next(finishing)
    }

    // MARK: - Feeding the machine

    /// Feeds a command or a bus message and performs its effects, under the command lock.
    @discardableResult
    func send(_ input: PlaybackMachine.Input) -> Bool {
        send(input, announcing: {})
    }

    /// Feeds a command, then runs `announce` outside the lock, before a Play's or a Pause's state change starts: the
    /// caller tells its clients first, and the thread the state change wakes cannot take the CPU in between.
    /// `estimate`: where a Pause finds the item, when its caller knows (see `apply`).
    @discardableResult
    func send(_ input: PlaybackMachine.Input, estimate: PlaybackItem.Position? = nil,
              announcing announce: () -> Void) -> Bool {
        guard !isShutDown.load(ordering: .acquiring) else { announce(); return false }
        let accepted = commandLock.withLock { _ in
            settle()
            return apply(input, estimate: estimate)
        }
        announce()
        startStateChanges()
        return accepted
    }

    /// Whether a Play's or a Pause's state change is held or under way: the next command would wait for it.
    var isChangingState: Bool { heldStateChanges.withLock { !$0.isEmpty } || stateChanges.isBusy }

    /// Must hold `commandLock`: Play's and Pause's state changes, held or under way, are done.
    private func settle() {
        startStateChanges()
        stateChanges.settle()
    }

    /// Hands the held state changes to their thread, in the order they were decided.
    private func startStateChanges() {
        for job in heldStateChanges.withLock({ held in defer { held = [] }; return held }) { stateChanges.async(job) }
    }

    /// Must hold `commandLock`. Effects that answer with an input (a reset, a seek) feed it before the next effect.
    private func apply(_ input: PlaybackMachine.Input, estimate: PlaybackItem.Position? = nil) -> Bool {
        let (step, generation, item) = machine.withLock { ($0.handle(input), $0.generation, $0.currentItem?.token) }
        var accepted = step.accepted
        switch input {
        case .play, .pause:
            // Nothing answers a state change: it goes on while the caller publishes the new status.
            if !step.effects.isEmpty, step.effects.allSatisfy(\.isSetState) {
                let effects = step.effects
                // A Play resumes where the faces were last told the paused pipeline stands, and a Pause stops where
                // its caller's clock-driven position reads: asking the pipeline (a query through every element down
                // to the sink, ~38,000 instructions on a cold cache) was the costliest part of their way to the
                // reply. A Pause without an estimate for this item asks.
                var known: Int64?
                if case .play = input {
                    known = lastKnownPosition.withLock { $0?.generation == generation ? $0?.position : nil }
                } else if let estimate, estimate.token == item {
                    known = max(0, estimate.nanoseconds)
                }
                let held = heldTokens.add(1, ordering: .relaxed).newValue
                if let at = known ?? position { heldPosition.withLock { $0 = (held, at) } }
                // Started once the caller has announced it (`send(_:announcing:)`), or by whoever settles first.
                heldStateChanges.withLock {
                    $0.append {
                        for effect in effects { _ = self.perform(effect) }
                        self.heldPosition.withLock { if $0?.token == held { $0 = nil } }
                    }
                }
                return accepted
            }
        default:
            break
        }
        for effect in step.effects {
            // A command is taken only if what it asked of GStreamer was (a seek it refused is not).
            if let answer = perform(effect) { accepted = apply(answer) && accepted }
        }
        return accepted
    }

    private func perform(_ effect: PlaybackMachine.Effect) -> PlaybackMachine.Input? {
        switch effect {
        case .reset(let fully):
            // NULL flushes the bus (auto-flush-bus) and drops whatever is posted until the pipeline leaves NULL: a
            // marker posted then would be lost, and every message of the next item with it. So READY before a marker.
            if fully { _ = gst_element_set_state(playbin, GST_STATE_NULL) }
            _ = gst_element_set_state(playbin, GST_STATE_READY)
            return .resetDone
        case .postMarker(let generation, let stopped):
            post(Self.markerName, fields: "gen=(guint64)\(generation), stopped=(boolean)\(stopped ? "true" : "false")")
        case .postRejected(let generation):
            post(Self.rejectedName, fields: "gen=(guint64)\(generation)")
        case .setURI(let uri):
            // A load (hand-overs set their URI in `aboutToFinish`): the machine's item is the one being loaded.
            let item = machine.withLock { $0.currentItem }
            if let item, item.uri == uri {
                streamGain.load(item)
                crossfader.load(item)
            }
            setNetworkBuffer(live: item?.uri == uri && item?.isLive == true)
            if let item, item.uri == uri { requested(item) }
            tn_object_set_string(playbin, "uri", uri)
        case .setState(let state):
            if gst_element_set_state(playbin, Self.gstState(state)) == GST_STATE_CHANGE_FAILURE {
                logger.debug("state change to \(state) failed; waiting for the error message")
            }
        case .seek(let position, let rate, let serial):
            // Before the seek: whatever its flush makes the pipeline post comes after this on the bus.
            post(Self.seekName, fields: "serial=(guint64)\(serial)")
            let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
            let ok = gst_element_seek(playbin, rate, GST_FORMAT_TIME, flags,
                                      GST_SEEK_TYPE_SET, gint64(position), GST_SEEK_TYPE_NONE, -1) != 0
            if !ok { logger.info("GStreamer refused the seek to \(position) ns (rate \(rate))") }
            return .seekIssued(ok)
        case .emit(let event):
            continuation.yield(PlaybackReport(event))
        case .wake:
            post(Self.wakeName, fields: "")
        case .log(let line):
            logger.debug("\(line)")
        }
        return nil
    }

    static func gstState(_ state: PlaybackMachine.PipelineState) -> GstState {
        switch state {
        case .null: return GST_STATE_NULL
        case .ready: return GST_STATE_READY
        case .paused: return GST_STATE_PAUSED
        case .playing: return GST_STATE_PLAYING
        }
    }

    static func pipelineState(_ state: GstState) -> PlaybackMachine.PipelineState {
        switch state {
        case GST_STATE_PLAYING: return .playing
        case GST_STATE_PAUSED: return .paused
        case GST_STATE_READY: return .ready
        default: return .null
        }
    }

    func shutdown() {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        post(Self.wakeName, fields: "")
        let onBusThread = busThreadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !onBusThread { busThreadDone.wait() }
        commandLock.withLock { _ in
            settle()
            _ = gst_element_set_state(playbin, GST_STATE_NULL)
        }
        let id = handlerID.exchange(0, ordering: .acquiringAndReleasing)
        if id != 0 { g_signal_handler_disconnect(playbin, gulong(id)) }
        let setupID = setupHandlerID.exchange(0, ordering: .acquiringAndReleasing)
        if setupID != 0 { g_signal_handler_disconnect(playbin, gulong(setupID)) }
        continuation.finish()
    }

    private func post(_ name: String, fields: String) {
        let text = fields.isEmpty ? name : "\(name), \(fields)"
        guard let structure = gst_structure_new_from_string(text),
              let message = gst_message_new_application(nil, structure) else { return }
        _ = gst_bus_post(bus, message)
    }

    // MARK: - element-setup (a streaming thread)

    /// The one setting that names a file rather than giving a value: a PEM file of CAs, made into a GTlsDatabase
    /// (souphttpsrc's own `ssl-ca-file` is ignored when GStreamer's HTTP source runs on libsoup 3).
    static let tlsDatabaseProperty = "tls-database"

    /// Applies `elementSettings` to an element playbin just created (the SoundFont of fluiddec).
    private func setUp(_ element: UnsafeMutablePointer<GstElement>) {
        guard let name = tn_element_factory_name(element).map({ String(cString: $0) }),
              let settings = elementSettings[name] else { return }
        for (property, value) in settings {
            if property == Self.tlsDatabaseProperty {
                var message: UnsafeMutablePointer<gchar>?
                if tn_object_set_tls_database(tn_object(element), property, value, &message) == 0 {
                    logger.error("\(name): cannot read the CAs in \(value): \(message.map { String(cString: $0) } ?? "")")
                    g_free(message)
                    continue
                }
            } else {
                gst_util_set_object_arg(tn_object(element), property, value)
            }
            logger.debug("\(name): \(property) = \(value)")
        }
    }

    // MARK: - about-to-finish (a streaming thread, synchronously)

    private func aboutToFinish() {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        guard let (finishing, generation) = machine.withLock({ $0.finishingItem() }) else {
            logger.debug("about-to-finish while a seek or a load is under way: no hand-over")
            return
        }
        guard let next = nextItem(after: finishing) else { return }
        // Handing over a missing or non-audio file stalls the pipeline: refuse it now and let the current item end.
        let effects: [PlaybackMachine.Effect]
        if let problem = MediaPrecheck.check(next.uri, typefind: true) {
            effects = machine.withLock { $0.handle(.refuse(next, problem, generation: generation)).effects }
        } else {
            effects = machine.withLock { $0.handle(.handOver(next, generation: generation)).effects }
        }
        // Only setURI, a wake, a post or a log: nothing here waits for a command.
        for effect in effects {
            if case .setURI(let uri) = effect {
                // Queued before the URI is set, so its gain is there when its stream reaches the filter.
                streamGain.handOver(next)
                crossfader.handOver(next)
                setNetworkBuffer(live: next.isLive)
                requested(next)
                tn_object_set_string(playbin, "uri", uri)
            } else {
                _ = perform(effect)
            }
        }
    }

    /// playbin's network buffer (queue2) holds 2 s by default, and playback holds until it is full: a live stream
    /// (which Icecast's first burst fills at once) starts after half a second's worth instead, as mpv does; files
    /// over HTTP keep the default, read ahead for seeks. Read by playbin when it sets up the item's source.
    private func setNetworkBuffer(live: Bool) {
        tn_object_set_int64(playbin, "buffer-duration", gint64(live ? Self.liveBufferDuration : -1))
    }

    /// How much of a live stream is buffered before it plays, ns.
    static let liveBufferDuration: Int64 = 500_000_000

    /// The items whose URIs were given to playbin last (a load, then perhaps a hand-over): an HTTP answer names its
    /// request's URI, which tells whose it is.
    private let requestedItems = Mutex<[PlaybackItem]>([])

    private func requested(_ item: PlaybackItem) {
        requestedItems.withLock { items in
            items.removeAll { $0.uri == item.uri }
            items.append(item)
            if items.count > 2 { items.removeFirst(items.count - 2) }
        }
    }

    /// GStreamer's HTTP source posts the answer to its request (`http-headers`) before any of the body: reported to
    /// the player, which learns from it what the source's own request would have told (a station's name, a live
    /// stream or a file). A stream found to be a file after all reads ahead as files do, when its buffer is not set
    /// up yet.
    private func responseHeaders(_ structure: UnsafePointer<GstStructure>) {
        guard let cURI = gst_structure_get_string(structure, "uri") else { return }
        let uri = String(cString: cURI)
        guard let item = requestedItems.withLock({ items in items.last { $0.uri == uri } }) else { return }
        var status: guint = 0
        _ = gst_structure_get_uint(structure, "http-status-code", &status)
        var headers: [String: String] = [:]
        if let fields = tn_value_structure(gst_structure_get_value(structure, "response-headers")) {
            for index in 0..<gst_structure_n_fields(fields) {
                guard let name = gst_structure_nth_field_name(fields, guint(index)),
                      let text = gst_structure_get_string(fields, name) else { continue }
                headers[String(cString: name).lowercased()] = String(cString: text)
            }
        }
        if item.isLive, (200..<300).contains(Int(status)), headers["content-length"] != nil,
           !headers.keys.contains(where: { $0.hasPrefix("icy-") || $0.hasPrefix("ice-") }),
           machine.withLock({ $0.currentItem?.token == item.token }) {
            setNetworkBuffer(live: false)
        }
        continuation.yield(PlaybackReport(.responseHeaders(item, status: Int(status), headers: headers)))
    }

    // MARK: - Bus thread

    private func runBus() {
        let mask = Self.readMessages
        var lastStateCheck = ContinuousClock.now
        while !isShutDown.load(ordering: .acquiring) {
            // 50 ms while something is watched (a preroll's deadline, a hand-over, a drain), else 1 s: an idle or
            // steadily playing daemon wakes once a second. Whatever starts a watch from another thread posts a
            // message, which wakes this one at once.
            let watching = machine.withLock { $0.isWatching }
            let timeout = (watching ? 50 : 1000) * tn_msecond()
            if let message = gst_bus_timed_pop_filtered(bus, timeout, mask) {
                // A sign of life for a preroll's deadline: it has no effects, so no command lock is taken for it.
                machine.withLock { if $0.isPrerolling { _ = $0.handle(.progress(now: .now)) } }
                if message.pointee.type == GST_MESSAGE_ERROR, let source = isFromSink(message) {
                    outputFailed(GStreamer.parseError(message), from: source)
                } else if message.pointee.type == GST_MESSAGE_ELEMENT {
                    if let structure = gst_message_get_structure(message), gst_structure_has_name(structure, "http-headers") != 0 {
                        responseHeaders(structure)
                    }
                } else if let input = decode(message) {
                    send(input)
                }
                gst_message_unref(message)
            }
            // Once a second is enough for a watch measured in seconds: not after each of a buffering stream's messages.
            if ContinuousClock.now - lastStateCheck >= .seconds(1) {
                lastStateCheck = .now
                if machine.withLock({ $0.checksState }) || heldStateChanges.withLock({ !$0.isEmpty }) {
                    checkState(now: lastStateCheck)
                }
            }
            if machine.withLock({ $0.isWatching }) {
                let playing = tn_state_current(playbin) == GST_STATE_PLAYING && tn_state_target(playbin) == GST_STATE_PLAYING
                send(.tick(now: .now, position: position, playing: playing))
            }
        }
    }

    /// Feeds playbin's state to the machine's watch, read under the command lock after the state changes asked for:
    /// read before, a Play carried out meanwhile would look like a target lost.
    private func checkState(now: ContinuousClock.Instant) {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        commandLock.withLock { _ in
            settle()
            _ = apply(.stateCheck(current: Self.pipelineState(tn_state_current(playbin)),
                                  target: Self.pipelineState(tn_state_target(playbin)), now: now))
        }
    }

    /// The message types `runBus` reads; the bus keeps no others (`tn_bus_keep_only_read`).
    static let readMessages: GstMessageType = {
        let types: [GstMessageType] = [GST_MESSAGE_EOS, GST_MESSAGE_ERROR, GST_MESSAGE_WARNING, GST_MESSAGE_STATE_CHANGED,
                                       GST_MESSAGE_ASYNC_DONE, GST_MESSAGE_STREAM_START, GST_MESSAGE_TAG,
                                       GST_MESSAGE_DURATION_CHANGED, GST_MESSAGE_APPLICATION, GST_MESSAGE_BUFFERING, GST_MESSAGE_ELEMENT]
        return GstMessageType(rawValue: types.reduce(0) { $0 | $1.rawValue })
    }()

    private func isFromPlaybin(_ message: UnsafeMutablePointer<GstMessage>) -> Bool {
        guard let src = message.pointee.src else { return false }
        return OpaquePointer(src) == OpaquePointer(playbin)
    }

    /// A bus message as an input of the machine, with what it needs read from the pipeline; nil for the rest.
    private func decode(_ message: UnsafeMutablePointer<GstMessage>) -> PlaybackMachine.Input? {
        switch message.pointee.type {
        case GST_MESSAGE_APPLICATION:
            guard let structure = gst_message_get_structure(message), let cname = gst_structure_get_name(structure) else { return nil }
            var gen: guint64 = 0
            _ = gst_structure_get_uint64(structure, "gen", &gen)
            switch String(cString: cname) {
            case Self.markerName:
                var stopped: gboolean = 0
                _ = gst_structure_get_boolean(structure, "stopped", &stopped)
                return .marker(UInt64(gen), stopped: stopped != 0)
            case Self.rejectedName:
                return .rejectedMarker(UInt64(gen))
            case Self.seekName:
                var serial: guint64 = 0
                _ = gst_structure_get_uint64(structure, "serial", &serial)
                return .seekMarker(UInt64(serial))
            default:
                return nil
            }
        case GST_MESSAGE_STATE_CHANGED:
            guard isFromPlaybin(message) else { return nil }
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            guard pending == GST_STATE_VOID_PENDING, new == tn_state_target(playbin) else { return nil }
            return .settled(Self.pipelineState(new), position: position)
        case GST_MESSAGE_ASYNC_DONE:
            let current = tn_state_current(playbin)
            let settled = current == tn_state_target(playbin) ? Self.pipelineState(current) : nil
            return .asyncDone(position: position, duration: duration, seekable: querySeekable(), settled: settled)
        case GST_MESSAGE_STREAM_START:
            var groupID: guint = 0
            let hasGroup = gst_message_parse_group_id(message, &groupID) != 0
            return .streamStart(group: hasGroup ? UInt32(groupID) : nil, duration: duration, seekable: querySeekable())
        case GST_MESSAGE_DURATION_CHANGED:
            return .durationChanged(duration)
        case GST_MESSAGE_TAG:
            guard let src = message.pointee.src, tn_is_sink_element(src) != 0 else { return nil }
            var list: UnsafeMutablePointer<GstTagList>?
            gst_message_parse_tag(message, &list)
            guard let list else { return nil }
            let tags = GStreamer.streamTags(list)
            gst_tag_list_unref(list)
            return tags.isEmpty ? nil : .tags(tags)
        case GST_MESSAGE_EOS:
            return .endOfStream
        case GST_MESSAGE_ERROR:
            let error = GStreamer.parseError(message)
            if let src = message.pointee.src, let path = tn_object_path(src) {
                logger.debug("error from \(String(cString: path)): \(error)")
                g_free(path)
            }
            return .error(error, now: .now)
        case GST_MESSAGE_WARNING:
            let warning = GStreamer.parseError(message, warning: true)
            logger.debug("GStreamer warning: \(warning.message) (\(warning.debug ?? ""))")
            return nil
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            return .buffering(percent: Int(percent))
        default:
            return nil
        }
    }
}

import CGStreamer
import Logging

/// The GStreamer side: one playbin, its bus thread, gapless hand-over; what it does is decided by its
/// `PlaybackMachine`.
///
/// All methods may be called from any thread. Events arrive in order on `reports`, fed by the
/// engine's bus thread. After `.finished` or `.failed` for the current item the engine waits:
/// the caller `load`s what comes next or calls `stop`.
public final class PlaybackEngine: Sendable {
    public static let defaultSink = "autoaudiosink"
    /// How long an item may take to reach PAUSED (preroll) before it is reported as failed.
    public static let defaultPrerollTimeout: Duration = .seconds(10)

    private let shell: PipelineShell

    /// - Parameters:
    ///   - output: where the audio goes. The default `autoaudiosink` falls back to a clock-synchronised null sink
    ///     when no audio device works (`usingNullSink`); an output that cannot be opened now (a Snapcast server that
    ///     is not running) starts the engine on a silent stand-in, reported at once by `.outputFailed`.
    ///   - elementSettings: properties (as strings) to set on elements playbin creates, by factory name,
    ///     e.g. `["fluiddec": ["soundfont": "/usr/share/sounds/sf2/FluidR3_GM.sf2"]]`; `tls-database` takes the
    ///     path of a PEM file of CAs.
    /// - Throws: `PlaybackError` when the output is described wrongly (an unknown element, no sink pad).
    public init(output: AudioOutput,
                logger: Logger = Logger(label: "tonearm.playback"),
                prerollTimeout: Duration = PlaybackEngine.defaultPrerollTimeout,
                elementSettings: [String: [String: String]] = [:]) throws {
        shell = try PipelineShell(output: output, logger: logger, prerollTimeout: prerollTimeout, elementSettings: elementSettings)
    }

    /// An engine whose output is a gst-launch style sink description ("wavenc ! filesink location=/tmp/x.wav",
    /// "fakesink sync=true"…), named "default".
    public convenience init(sinkDescription: String = PlaybackEngine.defaultSink,
                            logger: Logger = Logger(label: "tonearm.playback"),
                            prerollTimeout: Duration = PlaybackEngine.defaultPrerollTimeout,
                            elementSettings: [String: [String: String]] = [:]) throws {
        try self.init(output: .sink(sinkDescription), logger: logger, prerollTimeout: prerollTimeout, elementSettings: elementSettings)
    }

    deinit {
        shell.shutdown()
    }

    /// Opens an output and lets it go (`tonearm doctor`): true when it reaches a device, FIFO or server, false when
    /// it would play to the null sink. Throws a `PlaybackError` that says why it cannot be opened.
    public static func checkOutput(_ output: AudioOutput) throws -> Bool {
        GStreamer.ensureInitialized()
        let sink = try OutputSink.open(output, logger: Logger(label: "tonearm.doctor"))
        return !sink.isNull
    }

    /// The output audio goes to (also while it is lost and a silent stand-in plays instead).
    public var output: AudioOutput { shell.output }

    /// Opens `output` and builds its sink, touching nothing that plays; takes at most about a second (a FIFO with
    /// no reader, a refused or silent port are errors, never a wait). Throws a `PlaybackError` saying why.
    public func prepareOutput(_ output: AudioOutput) throws -> PreparedOutput {
        PreparedOutput(try OutputSink.open(output, logger: shell.logger))
    }

    /// Moves playback to a prepared output: the same item at the same position after a short gap, held paused when
    /// `paused`, else as it was.
    /// An output connected before the engine existed (`PreparedOutput.connect`) gets its sink built here; one that
    /// cannot be built is taken as lost: held paused on a stand-in, reported by `.outputFailed`.
    public func useOutput(_ prepared: PreparedOutput, paused: Bool?) {
        if let sink = prepared.sink { return shell.useSink(sink, paused: paused) }
        do {
            shell.useSink(try OutputSink.build(prepared, logger: shell.logger), paused: paused)
        } catch {
            let reason = error as? PlaybackError ?? OutputConnection.failure("\(error)")
            shell.park(on: prepared.output, because: reason, wasPlaying: snapshot.status == .playing)
        }
    }

    /// One stream for the engine's life, each event with when it happened; consume it from one task.
    public var reports: AsyncStream<PlaybackReport> { shell.reports }

    /// Called synchronously on a GStreamer streaming thread inside `about-to-finish` with the
    /// item about to end; returns the item to hand over gaplessly, or nil. Must be fast.
    public func setNextItemProvider(_ provider: @escaping @Sendable (_ finishing: PlaybackItem) -> PlaybackItem?) {
        shell.setProvider(provider)
    }

    /// Replaces whatever plays and goes to PLAYING, or to PAUSED when `startPaused`; a non-zero position (ns)
    /// prerolls, seeks, then plays. Status and position read as asked for at once.
    public func load(_ item: PlaybackItem, startPaused: Bool = false, at position: Int64 = 0) {
        shell.send(.load(item, paused: startPaused, at: position, now: .now))
    }

    /// Resumes; after stop, a failure or the end, starts the current item again from 0.
    public func play() { shell.send(.play(now: .now)) }
    public func pause() { shell.send(.pause(now: .now)) }
    /// Play, with `announce` run once the status is taken and before playbin's state change starts.
    public func play(announcing announce: () -> Void) { shell.send(.play(now: .now), announcing: announce) }
    /// Pause, the same way: the position the faces are told is taken with the decision, from `estimate` when it is
    /// for the item loaded (the position its caller already shows), else from the pipeline.
    public func pause(estimate: PlaybackItem.Position?, announcing announce: () -> Void) {
        shell.send(.pause(now: .now), estimate: estimate, announcing: announce)
    }
    /// READY, position 0; reports `.stateChanged(.stopped)`.
    public func stop() { shell.send(.stop) }

    /// Flushing, accurate seek at the current rate (ns); false if not seekable or nothing is loaded. A seek while
    /// the item opens is applied once it has prerolled. Position reads the target until `.seekCompleted`.
    @discardableResult
    public func seek(to nanoseconds: Int64) -> Bool { shell.send(.seek(nanoseconds, now: .now)) }

    /// Playback rate (clamped to 0.25…4), applied by a seek at the current position; kept
    /// for the next loads.
    @discardableResult
    public func setRate(_ rate: Double) -> Bool { shell.send(.setRate(rate, position: shell.position, now: .now)) }
    public var rate: Double { shell.snapshot.rate }

    /// Linear volume (playbin "volume", 1 = unchanged, clamped to 0…10).
    public var volume: Double { shell.volume }
    public func setVolume(_ v: Double) { shell.setVolume(v) }

    /// Sets the ReplayGain factor of an item (linear): at once when its stream plays, else when it starts. An item's
    /// own `gain` is applied when it is loaded or handed over; this is for changes after that (a new mode).
    public func setGain(_ gain: Double, forToken token: UInt64) { shell.streamGain.update(token: token, gain: gain) }
    /// The ReplayGain factor applied to what plays now.
    public var appliedGain: Double { shell.streamGain.applied }

    /// Switches the graphic equalizer on with `curve`, changes it, or switches it off (nil): while audio plays the
    /// gains ramp over a few tens of ms (on: from flat; off: to flat, then the equalizer leaves the path, so what
    /// plays is bit-exact again). The curve is applied as given: clipping prevention is the caller's.
    public func setEqualizer(_ curve: EqualizerCurve?) { shell.equalizer.set(curve) }
    /// The curve last set (nil: off).
    public var equalizer: EqualizerCurve? { shell.equalizer.curve }
    /// Whether the equalizer's elements are in the path now (after off they stay until the ramp to flat is heard).
    public var equalizerInPath: Bool { shell.equalizer.isLinked }
    /// Whether the last equalizer change has been carried out to the end (its ramp done; after off, the chain out).
    public var equalizerSettled: Bool { shell.equalizer.isSettled }
    /// Crossfade on for fades up to `seconds` (0 = off: the audio path is as without it, bit for bit); trailing
    /// silence below `silenceThreshold` dBFS is skipped. Which join fades is each handed-over item's `crossfade`.
    public func setCrossfade(seconds: Double, curve: FadeCurve = .equalPower,
                             silenceThreshold: Double = CrossfadeFormat.defaultSilenceThreshold) {
        shell.crossfader.configure(seconds: seconds, curve: curve, silenceThreshold: silenceThreshold)
    }

    /// The next `load` is a skip (Next, Previous, a jump) cutting what plays: the cut track fades out over `seconds`
    /// under the new one's start instead of stopping dead. Only while crossfade is on.
    public func fadeNextLoad(seconds: Double) { shell.crossfader.prepareSkip(seconds: seconds, heard: shell.position) }

    /// What clients should be told: status, item, seekability, rate.
    public var snapshot: PlaybackMachine.Snapshot { shell.snapshot }
    /// The snapshot's status, without building the snapshot.
    public var status: PlaybackState { shell.status }
    /// Whether a Play's or a Pause's state change is still being carried out by playbin: a command now waits for it.
    public var isChangingState: Bool { shell.isChangingState }
    /// The snapshot's item's token alone (nil when stopped).
    public var itemToken: UInt64? { shell.itemToken }
    /// Position in ns as clients should read it: a seek's target until it settles, 0 when stopped.
    public var reportedPosition: Int64 { shell.reportedPosition }
    /// The pipeline's own position in ns (`gst_element_query_position`); nil when unknown.
    public var position: Int64? { shell.position }
    /// Duration in ns; nil when unknown.
    public var duration: Int64? { shell.duration }
    public var isSeekable: Bool { shell.snapshot.canSeek }
    /// The item last reported `.started` (or loaded).
    public var currentItem: PlaybackItem? { shell.currentItem }
    /// The state last reported by `.stateChanged`.
    public var state: PlaybackState { shell.reportedState }
    /// The same, as `PlaybackControl` names it.
    public var pipelineState: PlaybackState { shell.reportedState }
    public var usingNullSink: Bool { shell.usingNullSink }

    /// NULL state, bus thread stopped, event stream finished. Idempotent.
    public func shutdown() { shell.shutdown() }
}

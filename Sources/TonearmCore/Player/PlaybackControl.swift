import Playback

/// What the `Player` asks of a playback engine. `PlaybackEngine` is the real one; tests drive the `Player` with a
/// fake that runs the same `PlaybackMachine` without GStreamer.
public protocol PlaybackControl: AnyObject, Sendable {
    /// One ordered stream of what the engine reports and when it saw it, for the engine's life.
    var reports: AsyncStream<PlaybackReport> { get }
    /// The status clients should be told, the item, seekability and rate.
    var snapshot: PlaybackMachine.Snapshot { get }
    /// The snapshot's status alone, without building the snapshot: a command reads it several times before its reply.
    var status: PlaybackState { get }
    /// Whether a Play's or a Pause's state change is still under way in the pipeline: the next command waits for it.
    var isChangingState: Bool { get }
    /// The token of the snapshot's item alone (nil when stopped), without building the snapshot.
    var itemToken: UInt64? { get }
    /// The pipeline's own state as last reported (it lags a command until the pipeline gets there).
    var pipelineState: PlaybackState { get }
    /// The position in ns as clients should read it (a seek's target until it settles; 0 when stopped).
    var reportedPosition: Int64 { get }
    func setNextItemProvider(_ provider: @escaping @Sendable (_ finishing: PlaybackItem) -> PlaybackItem?)
    func load(_ item: PlaybackItem, startPaused: Bool, at position: Int64)
    func play()
    func pause()
    /// Play, with `announce` (the caller telling its clients) run once the new status is taken and before the
    /// pipeline's state change starts, which would compete with it for the CPU.
    func play(announcing announce: () -> Void)
    /// Pause, the same way: the position is taken with the decision (`estimate` when it is for the item loaded,
    /// else the pipeline's), and its state change starts after `announce`.
    func pause(estimate: PlaybackItem.Position?, announcing announce: () -> Void)
    func stop()
    @discardableResult func seek(to nanoseconds: Int64) -> Bool
    @discardableResult func setRate(_ rate: Double) -> Bool
    func setVolume(_ volume: Double)
    /// Sets the ReplayGain factor of an item already loaded or handed over (at once when it plays).
    func setGain(_ gain: Double, forToken token: UInt64)
    /// The ReplayGain factor applied to what plays now.
    var appliedGain: Double { get }
    /// Switches the graphic equalizer on with `curve` (as given: clipping prevention is the caller's), changes it, or
    /// switches it off (nil), without a click while audio plays.
    func setEqualizer(_ curve: EqualizerCurve?)
    /// The output audio goes to (also while it is lost).
    var output: AudioOutput { get }
    /// Opens an output without touching what plays; at most about a second. Throws a `PlaybackError` saying why not.
    func prepareOutput(_ output: AudioOutput) throws -> PreparedOutput
    /// Moves playback to a prepared output, keeping the item and position; held paused when `paused`, else as it was.
    func useOutput(_ prepared: PreparedOutput, paused: Bool?)
    func shutdown()
    /// Crossfade on for fades up to `seconds` (0 = off), along `curve`, skipping trailing silence below
    /// `silenceThreshold` dBFS.
    func setCrossfade(seconds: Double, curve: FadeCurve, silenceThreshold: Double)
    /// The next load is a skip cutting what plays: it fades out over `seconds` under the new item's start.
    func fadeNextLoad(seconds: Double)
    /// Whether a pipeline exists that data could reach (false while a deferred engine waits for GStreamer's set-up).
    var canReceiveData: Bool { get }
    /// Something is about to be played (files being checked for an Open): an engine not set up yet starts now, so its
    /// set-up overlaps the checking.
    func warmUp()
}

extension PlaybackControl {
    /// From the snapshot, for an engine without a cheaper way (a test's).
    public var itemToken: UInt64? { snapshot.item?.token }
    /// An engine whose state changes are done when its commands return never makes the next one wait.
    public var isChangingState: Bool { false }
    /// An engine with no audio path of its own (a test's) has nothing to fade.
    public func setCrossfade(seconds: Double, curve: FadeCurve, silenceThreshold: Double) {}
    public func fadeNextLoad(seconds: Double) {}
    public var canReceiveData: Bool { true }
    public var status: PlaybackState { snapshot.status }
    /// A built engine is warm.
    public func warmUp() {}
    /// An engine whose state change costs nothing to start (a test's) announces after it.
    public func play(announcing announce: () -> Void) { play(); announce() }
    public func pause(estimate: PlaybackItem.Position?, announcing announce: () -> Void) { pause(); announce() }
}

extension PlaybackEngine: PlaybackControl {}

/// An event with the moment the engine saw it (on its bus thread): a player that gets to it late, on a loaded machine,
/// still knows when it happened (how long a track was heard counts from there).
public struct PlaybackReport: Sendable, Equatable {
    public var event: PlaybackEvent
    public var at: ContinuousClock.Instant

    public init(_ event: PlaybackEvent, at: ContinuousClock.Instant = .now) {
        self.event = event
        self.at = at
    }
}

/// What the engine reports, in order, on `PlaybackEngine.reports`.
public enum PlaybackEvent: Sendable, Equatable {
    /// STREAM_START: this item is now heard (first load or gapless hand-over).
    case started(PlaybackItem)
    /// The pipeline's own state, transient seek/preroll states filtered out.
    case stateChanged(PlaybackState)
    /// Duration in ns (nil when unknown, e.g. a live stream).
    case durationChanged(PlaybackItem, Int64?)
    /// The item's tags so far, merged (each event carries the full merged set).
    case tags(PlaybackItem, StreamTags)
    /// A flushing seek settled (ASYNC_DONE): item and new position in ns.
    case seekCompleted(PlaybackItem, Int64)
    /// The pipeline plays again after a seek that landed: its own position counts from now on (until then the
    /// seek's target stood in for it).
    case playingOn(PlaybackItem)
    /// The item played to its end and nothing was handed over gaplessly (EOS, or the stall
    /// after a failed hand-over). The pipeline then rests at the end until `load` or `stop`.
    case finished(PlaybackItem)
    /// The network buffer's fill level (0…100) while the item plays from the network; the pipeline pauses below 100.
    case buffering(PlaybackItem, Int)
    /// The answer to the item's own HTTP request (GStreamer's HTTP source): its status and response headers, names
    /// lowercased. It comes before the item's first audio, from the request that plays it (no request of its own).
    case responseHeaders(PlaybackItem, status: Int, headers: [String: String])
    /// The item could not be played (bad file, missing file, no decoder, time-out…).
    case failed(PlaybackItem, PlaybackError)
    /// The output could not be opened or stopped taking audio (snapserver went away): the engine holds the item
    /// paused where it was on a silent stand-in until an output is put back (`useOutput`). `wasPlaying`: it was
    /// playing when the output failed.
    case outputFailed(AudioOutput, PlaybackError, wasPlaying: Bool)
}

import Lyrics

/// Everything the player's bus face needs to know to keep clients current.
public enum PlayerEvent: Sendable, Equatable {
    /// Some property may have changed; the snapshot holds all of them.
    case changed(PlayerSnapshot)
    /// The position jumped (seek, SetPosition, a track restarting under LoopStatus.track); microseconds.
    case seeked(Int64)
    /// Periodic time event: track, position and length in microseconds.
    case tick(TrackID, position: Int64, length: Int64)
    case trackListReplaced([TrackID], current: TrackID?)
    case trackAdded(Track, after: TrackID?)
    case trackRemoved(TrackID)
    case trackMetadataChanged(Track)
    /// A track could not be played and was skipped.
    case trackFailed(TrackID, uri: String, error: TonearmError)
    /// The tick interval changed.
    case tickIntervalChanged(Duration)
    /// The current track's lyrics were found (or are gone: nil).
    case lyricsChanged(TrackID?, Lyrics?)
    /// The line being sung changed (index -1, start -1 and empty text: none, before the first line or untimed).
    case lyricsLineChanged(TrackID, index: Int, start: Int64, text: String)
    /// The network buffer's fill level changed (0…100; 100: playing from a full buffer, or not buffering).
    case buffering(TrackID, percent: Int)
    /// The ReplayGain mode changed.
    case replayGainModeChanged(ReplayGainMode)
    /// The current output, or its trouble ("" when none), changed.
    case outputChanged(name: String, problem: String)
    /// The current output failed (could not open, or stopped taking audio): playback holds paused, reconnecting.
    case outputFailed(name: String, message: String)
}

/// The player's state as MPRIS properties see it.
public struct PlayerSnapshot: Sendable, Equatable {
    public var status: PlaybackStatus = .stopped
    public var loop: LoopStatus = .none
    public var shuffle = false
    public var volume = 1.0
    public var rate = 1.0
    public var current: Track?
    public var canGoNext = false
    public var canGoPrevious = false
    public var canPlay = false
    public var canPause = false
    public var canSeek = false
    public var trackIDs: [TrackID] = []
    /// The current track's lyrics as plain text (MPRIS `xesam:asText`), once found.
    public var lyricsText: String?

    public init() {}
}

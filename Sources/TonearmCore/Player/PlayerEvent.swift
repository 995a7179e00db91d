import Lyrics
import Playback

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
    /// The equalizer was switched or changed.
    case equalizerChanged(EqualizerState)
    /// The crossfade length (0: off) or the silence threshold before a fade changed.
    case crossfadeChanged(seconds: Double, silenceThreshold: Double)
    /// The current output, or its trouble ("" when none), changed.
    case outputChanged(name: String, problem: String)
    /// The current output failed (could not open, or stopped taking audio): playback holds paused, reconnecting.
    case outputFailed(name: String, message: String)
    /// A track (or a live stream's song) began to be heard: what a scrobbler sends as "playing now". Not sent again on
    /// a resume or a seek.
    case nowPlaying(TrackID, TrackMetadata)
    /// A listen counted (half the track or 4 minutes heard), with or without a listening history to keep it.
    case listened(Listen)
}

/// The player's state as the faces see it: MPRIS properties, the MPD face's status and queue, and the rest.
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
    /// The queue's entries in list order, with their metadata.
    public var tracks: [Track] = []
    /// The queue's entry ids in list order (from `tracks`: the snapshot keeps the queue once).
    public var trackIDs: [TrackID] { tracks.map(\.id) }
    /// Whether `id` is in the queue (without building `trackIDs`).
    public func holds(_ id: TrackID) -> Bool { tracks.contains { $0.id == id } }
    /// Whether the two snapshots (of one player) list the same entries in the same order (without building
    /// `trackIDs`). The same queue version says so at once: the MPD face asks at every change, a pause included, and
    /// comparing 10,000 ids each time delayed its idle clients.
    public func hasSameEntries(as other: PlayerSnapshot) -> Bool {
        if queueVersion == other.queueVersion && tracks.count == other.tracks.count { return true }
        return tracks.lazy.map(\.id).elementsEqual(other.tracks.lazy.map(\.id))
    }
    /// Grows by one at every change of the queue's entries or their metadata.
    public var queueVersion: UInt64 = 0
    /// The entry that plays after the current one ends by itself.
    public var nextID: TrackID?
    /// Where the current entry and the next one are in `tracks`: a face showing their positions (MPD's `song:`) need
    /// not search 10,000 entries for them.
    public var currentIndex: Int?
    public var nextIndex: Int?
    /// The current track's lyrics as plain text (MPRIS `xesam:asText`), once found.
    public var lyricsText: String?
    /// The line being sung now, if the current track has timed lyrics and one is being sung.
    public var lyricsLine: LyricsLine?
    public var replayGainMode: ReplayGainMode = .off
    /// The graphic equalizer: on or off, its curve and the preset it came from.
    public var equalizer = EqualizerState()
    /// The presets it can be switched to, built-in ones first.
    public var equalizerPresets: [String] = []
    /// How long tracks overlap, in seconds (0: crossfade off).
    public var crossfade = 0.0
    /// Below this level (dBFS) a track's end is silence, skipped before a fade.
    public var silenceThreshold = CrossfadeFormat.defaultSilenceThreshold
    /// The output audio goes to, and why it takes none ("" while it does).
    public var output = ""
    public var outputProblem = ""
    /// Every output that can be switched to.
    public var outputs: [OutputDescription] = []
    /// The current track's lyrics, once found.
    public var lyrics: Lyrics?
    /// The ReplayGain factor applied to what plays now (1 when nothing plays or the mode is off).
    public var appliedGain = 1.0
    /// How full the network buffer of what plays is, 0…100 (100: not buffering).
    public var buffering = 100
    public var tickInterval: Duration = .seconds(1)
    /// What is added as the queue is about to end.
    public var continueMode: ContinueMode = .off

    public init() {}
}

/// A line of timed lyrics being sung: its index, its start in microseconds and its text.
public struct LyricsLine: Sendable, Equatable {
    public var index: Int
    public var start: Int64
    public var text: String

    public init(index: Int, start: Int64, text: String) {
        self.index = index
        self.start = start
        self.text = text
    }
}

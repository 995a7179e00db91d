/// What the engine plays: a URI plus an opaque token the caller uses to recognise it in events.
public struct PlaybackItem: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var uri: String
    public var token: UInt64
    /// The source knows the stream seeks, before GStreamer can say so: a local file of known length, or midiparse
    /// reading a local file (its seeking query answers "not seekable", yet it seeks correctly). Seeks sent while the
    /// item opens are then taken and applied once it has prerolled.
    public var knownSeekable: Bool
    /// The linear factor (ReplayGain) applied to this item's samples from its first one: set when its stream starts,
    /// so a gapless join changes it at the boundary sample. 1 = unchanged.
    public var gain: Double
    /// A live network stream (internet radio): it starts after a short network buffer, not playbin's 2 s.
    public var isLive: Bool
    /// How it comes in when handed over after another: overlapping it by a fade, or (nil) joined to the sample.
    public var crossfade: Crossfade?

    public init(uri: String, token: UInt64, knownSeekable: Bool = false, gain: Double = 1, isLive: Bool = false,
                crossfade: Crossfade? = nil) {
        self.uri = uri
        self.token = token
        self.knownSeekable = knownSeekable
        self.gain = gain
        self.isLive = isLive
        self.crossfade = crossfade
    }

    public var description: String { "#\(token) \(uri)" }
}

extension PlaybackItem {
    /// Where an item stands as a caller reckons it (its clock-driven position), for the item with `token`.
    public struct Position: Sendable, Equatable {
        public var token: UInt64
        public var nanoseconds: Int64

        public init(token: UInt64, nanoseconds: Int64) {
            self.token = token
            self.nanoseconds = nanoseconds
        }
    }
}

/// What the engine plays: a URI plus an opaque token the caller uses to recognise it in events.
public struct PlaybackItem: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var uri: String
    public var token: UInt64
    /// The source knows the stream seeks, before GStreamer can say so: a local file of known length, or midiparse
    /// reading a local file (its seeking query answers "not seekable", yet it seeks correctly). Seeks sent while the
    /// item opens are then taken and applied once it has prerolled.
    public var knownSeekable: Bool

    public init(uri: String, token: UInt64, knownSeekable: Bool = false) {
        self.uri = uri
        self.token = token
        self.knownSeekable = knownSeekable
    }

    public var description: String { "#\(token) \(uri)" }
}

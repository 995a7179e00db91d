/// What the engine plays: a URI plus an opaque token the caller uses to recognise it in events.
public struct PlaybackItem: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var uri: String
    public var token: UInt64
    /// The stream seeks although GStreamer's seeking query says it cannot (midiparse reading a local file in
    /// pull mode answers "not seekable" yet seeks correctly).
    public var seeksDespiteQuery: Bool

    public init(uri: String, token: UInt64, seeksDespiteQuery: Bool = false) {
        self.uri = uri
        self.token = token
        self.seeksDespiteQuery = seeksDespiteQuery
    }

    public var description: String { "#\(token) \(uri)" }
}

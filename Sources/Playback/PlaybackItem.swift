/// What the engine plays: a URI plus an opaque token the caller uses to recognise it in events.
public struct PlaybackItem: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var uri: String
    public var token: UInt64

    public init(uri: String, token: UInt64) {
        self.uri = uri
        self.token = token
    }

    public var description: String { "#\(token) \(uri)" }
}

/// An MPD error reply: `ACK [code@index] {command} message`, with mpd 0.23's error codes.
public struct MPDAck: Error, Sendable, Equatable {
    /// mpd's `ACK_ERROR_*` codes (src/protocol/Ack.hxx).
    public enum Code: Int, Sendable {
        case notList = 1
        case arg = 2
        case password = 3
        case permission = 4
        case unknown = 5
        case noExist = 50
        case playlistMax = 51
        case system = 52
        case playlistLoad = 53
        case updateAlready = 54
        case playerSync = 55
        case exist = 56
    }

    public var code: Code
    /// The command's place in its command list (0 outside a list).
    public var index: Int
    /// The command's name; empty when the line had none.
    public var command: String
    public var message: String

    public init(_ code: Code, _ message: String, command: String = "", index: Int = 0) {
        self.code = code
        self.message = message
        self.command = command
        self.index = index
    }

    /// The reply line, newline included.
    public var line: String { "ACK [\(code.rawValue)@\(index)] {\(command)} \(message)\n" }

    static func unknownCommand(_ name: String) -> MPDAck { MPDAck(.unknown, "unknown command \"\(name)\"") }
    static func wrongArgumentCount(_ name: String) -> MPDAck { MPDAck(.arg, "wrong number of arguments for \"\(name)\"") }
    static func noSuchSong() -> MPDAck { MPDAck(.noExist, "No such song") }
    static func badSongIndex() -> MPDAck { MPDAck(.arg, "Bad song index") }
    static func notSupported(_ what: String) -> MPDAck { MPDAck(.unknown, "\(what) is not supported by Tonearm") }
}

/// An error a person can act on; its `name` is the D-Bus error name `org.tonearm.Error.<reason>`.
public struct TonearmError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public let message: String

    public init(_ reason: String, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var name: String { "org.tonearm.Error." + reason }
    public var description: String { message }

    public static func noSuchFile(_ path: String) -> TonearmError { .init("NoSuchFile", "no such file: \(path)") }
    public static func notReadable(_ path: String) -> TonearmError { .init("NotReadable", "file is not readable: \(path)") }
    public static func notAFile(_ path: String) -> TonearmError { .init("NotAFile", "not a regular file: \(path)") }
    public static func unsupportedScheme(_ uri: String) -> TonearmError {
        .init("UnsupportedScheme", "unsupported URI scheme: \(uri)")
    }
    public static func noSuchTrack(_ id: String) -> TonearmError { .init("NoSuchTrack", "no such track in the queue: \(id)") }
    public static func invalidValue(_ message: String) -> TonearmError { .init("InvalidValue", message) }
}

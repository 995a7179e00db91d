/// An error a person can act on; its `name` is the D-Bus error name `org.tonearm.Error.<reason>`.
public struct TonearmError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every reason Tonearm gives, one name each; `dbus/*.xml` documents each (a test checks both ways).
    public enum Reason: String, Sendable, CaseIterable {
        case accessDenied = "AccessDenied"
        case browseFailed = "BrowseFailed"
        case busy = "Busy"
        case cancelled = "Cancelled"
        case cannotDecode = "CannotDecode"
        case connectionRefused = "ConnectionRefused"
        case corruptState = "CorruptState"
        case emptyPlaylist = "EmptyPlaylist"
        case exportFailed = "ExportFailed"
        case failed = "Failed"
        case forbidden = "Forbidden"
        case hostNotFound = "HostNotFound"
        case httpError = "HTTPError"
        case invalidArgs = "InvalidArgs"
        case invalidArgument = "InvalidArgument"
        case invalidConfig = "InvalidConfig"
        case invalidMIDIFile = "InvalidMIDIFile"
        case invalidPlaylist = "InvalidPlaylist"
        case invalidSoundFont = "InvalidSoundFont"
        case invalidUri = "InvalidUri"
        case invalidValue = "InvalidValue"
        case ioError = "IOError"
        case libraryFailed = "LibraryFailed"
        case localSendFailed = "LocalSendFailed"
        case networkError = "NetworkError"
        case noArt = "NoArt"
        case noLyrics = "NoLyrics"
        case noSuchExport = "NoSuchExport"
        case noSuchFile = "NoSuchFile"
        case noSuchFolder = "NoSuchFolder"
        case noSuchOffer = "NoSuchOffer"
        case noSuchOutput = "NoSuchOutput"
        case noSuchPlaylist = "NoSuchPlaylist"
        case noSuchRoot = "NoSuchRoot"
        case noSuchTrack = "NoSuchTrack"
        case notAFile = "NotAFile"
        case notFound = "NotFound"
        case nothingPlaying = "NothingPlaying"
        case nothingToPlay = "NothingToPlay"
        case nothingToSave = "NothingToSave"
        case notReadable = "NotReadable"
        case notSaved = "NotSaved"
        case notSupported = "NotSupported"
        case notWritable = "NotWritable"
        case outputUnavailable = "OutputUnavailable"
        case outsideRoot = "OutsideRoot"
        case playbackFailed = "PlaybackFailed"
        case playlistTooLarge = "PlaylistTooLarge"
        case refusedEntry = "RefusedEntry"
        case renditionFailed = "RenditionFailed"
        case sharesFailed = "SharesFailed"
        case soundFontMissing = "SoundFontMissing"
        case stalled = "Stalled"
        case streamLost = "StreamLost"
        case timedOut = "TimedOut"
        case tlsError = "TLSError"
        case tooLarge = "TooLarge"
        case tooManyRedirects = "TooManyRedirects"
        case truncated = "Truncated"
        case unauthorized = "Unauthorized"
        case unsupportedScheme = "UnsupportedScheme"
        case unsupportedType = "UnsupportedType"
        case waveformFailed = "WaveformFailed"
        case writeFailed = "WriteFailed"
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var name: String { "org.tonearm.Error." + reason.rawValue }
    public var description: String { message }

    public static func noSuchFile(_ path: String) -> TonearmError { .init(.noSuchFile, "no such file: \(path)") }
    public static func notReadable(_ path: String) -> TonearmError { .init(.notReadable, "file is not readable: \(path)") }
    public static func notAFile(_ path: String) -> TonearmError { .init(.notAFile, "not a regular file: \(path)") }
    public static func unsupportedScheme(_ uri: String) -> TonearmError {
        .init(.unsupportedScheme, "unsupported URI scheme: \(uri)")
    }
    public static func noSuchTrack(_ id: String) -> TonearmError { .init(.noSuchTrack, "no such track in the queue: \(id)") }
    public static func invalidValue(_ message: String) -> TonearmError { .init(.invalidValue, message) }
}

import DBus
import Dispatch
import TonearmCore

/// org.mpris.MediaPlayer2: who we are and what we can open.
struct MediaPlayer2Interface: DBusInterfaceHandler {
    private let declared = Contract("org.mpris.MediaPlayer2")
    var interface: DBusInterfaceDescription { declared.description }
    let media: any MediaOperations
    let quit: @Sendable () async -> Void
    /// Local files, and network streams (icy/icyx: SHOUTcast's names for http/https).
    static let uriSchemes = ["file", "http", "https", "icy", "icyx"]
    /// Playlist files (M3U/M3U8, PLS, XSPF), queued entry by entry by the streams plugin.
    static let playlistMimeTypes = ["application/vnd.apple.mpegurl", "application/xspf+xml", "audio/mpegurl", "audio/x-mpegurl", "audio/x-scpls"]

    /// Whether a call naming `uris` waits for a server (a network stream or playlist): it is then answered out of order,
    /// so a slow server holds no other call.
    static func reachesNetwork(_ uris: [String]) -> Bool {
        uris.contains { uri in
            guard let colon = uri.firstIndex(of: ":") else { return false }
            return ["http", "https", "icy", "icyx"].contains(uri[..<colon].lowercased())
        }
    }

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        switch method {
        case "Quit":
            // Shuts down after answering: the reply is queued as this returns, and the daemon closes its connection
            // only once the calls it was handling are answered (`DBusConnection.closeAfterReplies`).
            Task { await quit() }
            return []
        case "Raise":
            return [] // CanRaise is false: there is no window to raise.
        default:
            throw DBusError.unknownMethod(method)
        }
    }

    /// The constant properties, answered on the bus's thread (also while the daemon starts). Not SupportedMimeTypes:
    /// it is read from GStreamer's registry on first use (about 5 ms), once GStreamer is up, which after an install
    /// or an update (the registry built again) takes a second or more; so reads that include it are answered out of
    /// order, off the concurrency pool, and hold nothing else meanwhile. All of these are constant: no order to keep.
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool {
        method == "GetAll" || (method == "Get" && arguments.dropFirst().first?.stringValue == "SupportedMimeTypes")
    }

    func currentValue(_ property: String) -> DBusValue? {
        switch property {
        case "CanQuit": .bool(true)
        case "CanRaise": .bool(false)
        case "HasTrackList": .bool(true)
        case "Identity": .string("Tonearm")
        case "DesktopEntry": .string("tonearm")
        case "SupportedUriSchemes": .stringArray(Self.uriSchemes)
        default: nil
        }
    }

    func get(_ property: String) async throws -> DBusValue {
        if let value = currentValue(property) { return value }
        switch property {
        case "SupportedMimeTypes":
            let media = media
            let types = try await DispatchQueue.global().run { media.supportedMimeTypes() }
            return .stringArray(Array(Set(types + Self.playlistMimeTypes)).sorted())
        default: throw DBusError.unknownProperty(property)
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.propertyReadOnly(property)
    }
}

import DBus
import TonearmCore

/// org.mpris.MediaPlayer2: who we are and what we can open.
struct MediaPlayer2Interface: DBusInterfaceHandler {
    let interface = contract("org.mpris.MediaPlayer2")
    let media: any MediaOperations
    let quit: @Sendable () async -> Void
    static let uriSchemes = ["file"]

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

    func get(_ property: String) async throws -> DBusValue {
        switch property {
        case "CanQuit": return .bool(true)
        case "CanRaise": return .bool(false)
        case "HasTrackList": return .bool(true)
        case "Identity": return .string("Tonearm")
        case "DesktopEntry": return .string("tonearm")
        case "SupportedUriSchemes": return .stringArray(Self.uriSchemes)
        // Read from GStreamer's registry on first use (about 5 ms), not while the daemon starts.
        case "SupportedMimeTypes": return .stringArray(media.supportedMimeTypes())
        default: throw DBusError.unknownProperty(property)
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.propertyReadOnly(property)
    }
}

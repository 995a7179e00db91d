import DBus
import Synchronization
import TonearmCore

/// What both playlist interfaces share: the playlists, the player, and the active playlist with the queue it made.
final class PlaylistsFace: Sendable {
    static let mprisName = "org.mpris.MediaPlayer2.Playlists"
    let playlists: any PlaylistsAPI
    let player: Player
    let connection: DBusConnection
    /// The playlist last activated and the track ids it put in the queue (it stays active while the queue is those).
    private let active = Mutex<(PlaylistRecord, [TrackID])?>(nil)
    private let lastCount = Mutex<Int?>(nil)

    init(playlists: any PlaylistsAPI, player: Player, connection: DBusConnection) {
        self.playlists = playlists
        self.player = player
        self.connection = connection
    }

    static func structure(_ p: PlaylistRecord) -> DBusValue { .structure([.objectPath(p.id), .string(p.name), .string("")]) }

    var activeValue: DBusValue {
        guard let (playlist, _) = active.withLock({ $0 }) else {
            // The spec: Valid false, and "/" as the id (it must still be an object path).
            return .structure([.bool(false), .structure([.objectPath("/"), .string(""), .string("")])])
        }
        return .structure([.bool(true), Self.structure(playlist)])
    }

    var count: Int { (try? playlists.playlists(ordering: "User", reversed: false).count) ?? 0 }

    /// Queues a playlist; with `mode` "play" or "replace" it replaces the queue and becomes the active playlist.
    func load(_ playlist: PlaylistRecord, mode: String) async throws -> [TrackID] {
        let ids: [TrackID]
        switch mode {
        case "play", "replace": ids = try await player.replaceQueue([playlist.uri], play: mode == "play")
        case "enqueue": return try await player.add([playlist.uri], at: .end)
        default: throw TonearmError.invalidValue("Mode must be replace, play or enqueue, not \(mode)")
        }
        playlists.markPlayed(playlist.id)
        active.withLock { $0 = (playlist, ids) }
        connection.emitPropertiesChanged(path: MPRISService.objectPath, interface: Self.mprisName, changed: ["ActivePlaylist": activeValue])
        return ids
    }

    /// The queue was replaced: the active playlist stays so only while the queue is what it made.
    func queueReplaced(_ ids: [TrackID]) {
        let cleared = active.withLock { state -> Bool in
            guard let (_, made) = state, made != ids else { return false }
            state = nil
            return true
        }
        if cleared {
            connection.emitPropertiesChanged(path: MPRISService.objectPath, interface: Self.mprisName, changed: ["ActivePlaylist": activeValue])
        }
    }

    /// After a save or a removal: PlaylistCount when it changed, PlaylistChanged for a saved list written again.
    func playlistsChanged(rewritten: PlaylistRecord? = nil) {
        let now = count
        let previous = lastCount.withLock { last -> Int? in
            defer { last = now }
            return last
        }
        if previous != now {
            connection.emitPropertiesChanged(path: MPRISService.objectPath, interface: Self.mprisName, changed: ["PlaylistCount": .uint32(UInt32(now))])
        }
        if let rewritten {
            connection.emitSignal(path: MPRISService.objectPath, interface: Self.mprisName, member: "PlaylistChanged", arguments: [Self.structure(rewritten)])
        }
    }

    func rememberCount() { lastCount.withLock { $0 = count } }
}

/// org.mpris.MediaPlayer2.Playlists, exactly as MPRIS 2.2 says.
struct PlaylistsInterface: DBusInterfaceHandler {
    private let declared = Contract(PlaylistsFace.mprisName)
    var interface: DBusInterfaceDescription { declared.description }
    let face: PlaylistsFace

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged {
            switch method {
            case "ActivatePlaylist":
                let id = a[0].stringValue ?? ""
                let all = try face.playlists.playlists(ordering: "User", reversed: false)
                guard let playlist = all.first(where: { $0.id == id }) else {
                    throw TonearmError(.noSuchPlaylist, "no playlist with the id \(id)")
                }
                _ = try await face.load(playlist, mode: "play")
                return []
            case "GetPlaylists":
                let index = Int(a[0].int64Value ?? 0), maxCount = Int(a[1].int64Value ?? 0)
                let order = a[2].stringValue ?? ""
                let all = try face.playlists.playlists(ordering: order, reversed: a[3].boolValue ?? false)
                let page = index < all.count ? Array(all[index..<min(all.count, index + maxCount)]) : []
                return [.array(element: "(oss)", page.map(PlaylistsFace.structure))]
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    /// Activating a playlist may read a network playlist it names.
    func answersOutOfOrder(_ method: String) -> Bool { method == "ActivatePlaylist" }

    func get(_ property: String) async throws -> DBusValue {
        switch property {
        case "PlaylistCount": return .uint32(UInt32(face.count))
        case "Orderings": return .stringArray(face.playlists.orderings)
        case "ActivePlaylist": return face.activeValue
        default: throw DBusError.unknownProperty(property)
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.propertyReadOnly(property)
    }
}

/// org.tonearm.Playlists1: saving the queue, showing, loading and removing playlists.
struct TonearmPlaylistsInterface: DBusInterfaceHandler {
    private let declared = Contract("org.tonearm.Playlists1")
    var interface: DBusInterfaceDescription { declared.description }
    let face: PlaylistsFace

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged {
            switch method {
            case "List":
                let all = try face.playlists.playlists(ordering: "User", reversed: false)
                return [.array(element: "(ossb)", all.map { .structure([.objectPath($0.id), .string($0.name), .string($0.uri), .bool($0.isSaved)]) })]
            case "Show":
                let entries = try await face.playlists.entries(a[0].stringValue ?? "")
                return [.array(element: "(ssx)", entries.map { .structure([.string($0.uri), .string($0.title), .int64($0.seconds)]) })]
            case "Save":
                let tracks = await face.player.tracks
                guard !tracks.isEmpty else { throw TonearmError(.nothingToSave, "the queue is empty: nothing to save") }
                let name = a[0].stringValue ?? ""
                let existed = (try? face.playlists.playlist(name))?.isSaved == true
                let saved = try face.playlists.save(name, tracks: tracks)
                face.playlistsChanged(rewritten: existed ? saved : nil)
                return [.objectPath(saved.id)]
            case "Load":
                let playlist = try face.playlists.playlist(a[0].stringValue ?? "")
                return [.objectPathArray(try await face.load(playlist, mode: a[1].stringValue ?? "").map(\.path))]
            case "Remove":
                try face.playlists.remove(a[0].stringValue ?? "")
                face.playlistsChanged()
                return []
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    /// Loading may read a network playlist.
    func answersOutOfOrder(_ method: String) -> Bool { method == "Load" }

    func get(_ property: String) async throws -> DBusValue { throw DBusError.unknownProperty(property) }
    func set(_ property: String, _ value: DBusValue) async throws { throw DBusError.unknownProperty(property) }
}

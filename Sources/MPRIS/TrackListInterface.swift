import DBus
import TonearmCore

/// org.mpris.MediaPlayer2.TrackList: the queue.
struct TrackListInterface: DBusInterfaceHandler {
    private let declared = Contract("org.mpris.MediaPlayer2.TrackList")
    var interface: DBusInterfaceDescription { declared.description }
    let player: Player

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged {
            switch method {
            case "GetTracksMetadata":
                let ids = (a[0].arrayValue ?? []).compactMap(\.stringValue).map(TrackID.init(path:))
                // From the published queue, without waiting for the player; unknown ids are left out, as the spec allows.
                var byID: [TrackID: Track] = [:]
                for track in player.state.snapshot.tracks { byID[track.id] = track }
                return [.array(element: "a{sv}", ids.compactMap { byID[$0].map { MetadataEncoding.encode($0) } })]
            case "AddTrack":
                let after = TrackID(path: a[1].stringValue ?? TrackID.noTrack.path)
                try await player.addTrack(a[0].stringValue ?? "", after: after, setAsCurrent: a[2].boolValue ?? false)
            case "RemoveTrack":
                try await player.remove(TrackID(path: a[0].stringValue ?? ""))
            case "GoTo":
                let id = TrackID(path: a[0].stringValue ?? "")
                guard await player.track(id) != nil else { throw TonearmError.noSuchTrack(id.path) }
                await player.goTo(id)
            default: throw DBusError.unknownMethod(method)
            }
            return []
        }
    }

    /// AddTrack of a network stream waits for the server's headers: every other call goes on meanwhile.
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool {
        method == "AddTrack" && MediaPlayer2Interface.reachesNetwork(arguments.prefix(1).compactMap(\.stringValue))
    }

    func get(_ property: String) async throws -> DBusValue {
        guard let value = currentValue(property) else { throw DBusError.unknownProperty(property) }
        return value
    }

    /// From the published state, on the bus thread.
    func currentValue(_ property: String) -> DBusValue? {
        switch property {
        case "Tracks": return .objectPathArray(player.state.snapshot.trackIDs.map(\.path))
        case "CanEditTracks": return .bool(true)
        default: return nil
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.propertyReadOnly(property)
    }
}

import Foundation
import MPDProtocol
import MPRIS
import Streams
import TonearmCore

extension SavedPlaylists: PlaylistsAPI {
    public var orderings: [String] { PlaylistOrdering.allCases.map(\.rawValue) }

    public func playlists(ordering: String, reversed: Bool) throws -> [PlaylistRecord] {
        guard let order = PlaylistOrdering(rawValue: ordering) else {
            throw TonearmError.invalidValue("unknown playlist ordering \(ordering) (known: \(orderings.joined(separator: ", ")))")
        }
        return order.sort(list(), reversed: reversed).map(Self.record)
    }

    public func playlist(_ nameOrID: String) throws -> PlaylistRecord {
        Self.record(try find(nameOrID))
    }

    public func markPlayed(_ id: String) { markPlayed(id, at: Date()) }

    public func entries(_ nameOrID: String) throws -> [(uri: String, title: String, seconds: Int64)] {
        let playlist: PlaylistInfo = try find(nameOrID)
        return try entries(playlist).map { ($0.location, $0.title ?? "", $0.duration.map { Int64($0.rounded()) } ?? -1) }
    }

    public func save(_ name: String, tracks: [Track]) throws -> PlaylistRecord {
        let entries = tracks.map { track in
            let m = track.metadata
            let title = [m.artists.joined(separator: ", "), m.title ?? ""].filter { !$0.isEmpty }.joined(separator: " - ")
            return PlaylistEntry(location: m.url, title: title.isEmpty ? nil : title,
                                 duration: m.isLive == true ? nil : m.length.map { Double($0) / 1_000_000 })
        }
        return Self.record(try save(name, entries: entries))
    }

    static func record(_ p: PlaylistInfo) -> PlaylistRecord {
        PlaylistRecord(id: p.id, name: p.name, uri: p.file.absoluteString, isSaved: p.isSaved)
    }
}

/// The MPD face's stored playlists are these saved playlists (entries by URI; titles and lengths are the player's).
extension SavedPlaylists: MPDPlaylistStore {
    public func playlists() throws -> [(name: String, modified: Date)] { list().map { ($0.name, $0.modified) } }

    public func uris(of name: String) throws -> [String] { try entries(find(name)).map(\.location) }

    public func write(_ name: String, uris: [String]) throws {
        try save(name, entries: uris.map { PlaylistEntry(location: $0) })
    }
}

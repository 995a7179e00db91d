import Foundation
import LocalLibrary
import Logging
import MPDProtocol
import MPRIS
import Streams
import Synchronization
import TonearmCore

/// Every playlist the faces list: the saved ones and those in the music folders (Streams' `SavedPlaylists`), and the
/// smart ones, whose rules files sit beside the saved ones and whose tracks the library selects when they are read.
final class PlaylistCatalog: Sendable {
    let saved: SavedPlaylists
    let library: LocalLibrary
    let logger: Logger
    /// The rules files already found wrong, by path and modification time: logged once, not on every listing.
    private let reported = Mutex<[String: Date]>([:])

    init(saved: SavedPlaylists, library: LocalLibrary, logger: Logger) {
        self.saved = saved
        self.library = library
        self.logger = logger
    }

    /// Every playlist; a smart one whose rules are wrong stays listed (so it can be found and mended) and is logged
    /// once, with the line and the reason.
    func list() -> [PlaylistInfo] {
        let all = saved.list()
        for p in all where p.isSmart { check(p) }
        return all
    }

    private func check(_ p: PlaylistInfo) {
        guard reported.withLock({ $0[p.file.path] }) != p.modified else { return }
        let text = (try? String(contentsOf: p.file, encoding: .utf8)) ?? ""
        do {
            _ = try SmartRulesParser.parse(text)
        } catch {
            logger.warning("smart playlist \(p.file.lastPathComponent): \(error) (it stays listed, and is refused until mended)")
            reported.withLock { $0[p.file.path] = p.modified }
        }
    }

    func find(_ nameOrID: String) throws(TonearmError) -> PlaylistInfo { try saved.find(nameOrID) }

    /// A playlist's entries: a smart one's tracks as the library selects them now.
    func entries(_ p: PlaylistInfo) async throws -> [PlaylistEntry] {
        guard p.isSmart else { return try saved.entries(p) }
        return try await library.smartTracks(file: p.file).map { track in
            let title = [track.artist, track.title].filter { !$0.isEmpty }.joined(separator: " - ")
            return PlaylistEntry(location: track.uri, title: title.isEmpty ? nil : title, duration: track.duration > 0 ? track.duration : nil)
        }
    }

    /// A smart playlist is changed by editing its rules, never overwritten with a list.
    func refuseSmart(_ name: String) throws(TonearmError) {
        if list().contains(where: { $0.isSmart && $0.name == name }) {
            throw TonearmError.invalidValue("\(name) is a smart playlist: its tracks come from its rules (edit \(name).smart in \(saved.folder.path))")
        }
    }
}

extension PlaylistCatalog: PlaylistsAPI {
    var orderings: [String] { PlaylistOrdering.allCases.map(\.rawValue) }

    func playlists(ordering: String, reversed: Bool) throws -> [PlaylistRecord] {
        guard let order = PlaylistOrdering(rawValue: ordering) else {
            throw TonearmError.invalidValue("unknown playlist ordering \(ordering) (known: \(orderings.joined(separator: ", ")))")
        }
        return order.sort(list(), reversed: reversed).map(Self.record)
    }

    func playlist(_ nameOrID: String) throws -> PlaylistRecord {
        Self.record(try find(nameOrID))
    }

    func markPlayed(_ id: String) { saved.markPlayed(id, at: Date()) }

    func entries(_ nameOrID: String) async throws -> [(uri: String, title: String, seconds: Int64)] {
        try await entries(find(nameOrID)).map { ($0.location, $0.title ?? "", $0.duration.map { Int64($0.rounded()) } ?? -1) }
    }

    func save(_ name: String, tracks: [Track]) throws -> PlaylistRecord {
        try refuseSmart(name)
        let entries = tracks.map { track in
            let m = track.metadata
            let title = [m.artists.joined(separator: ", "), m.title ?? ""].filter { !$0.isEmpty }.joined(separator: " - ")
            return PlaylistEntry(location: m.url, title: title.isEmpty ? nil : title,
                                 duration: m.isLive == true ? nil : m.length.map { Double($0) / 1_000_000 })
        }
        return Self.record(try saved.save(name, entries: entries))
    }

    func remove(_ name: String) throws { try saved.remove(name) }

    static func record(_ p: PlaylistInfo) -> PlaylistRecord {
        PlaylistRecord(id: p.id, name: p.name, uri: p.file.absoluteString, isSaved: p.isSaved)
    }
}

/// The MPD face's stored playlists are these playlists (entries by URI; titles and lengths are the player's).
extension PlaylistCatalog: MPDPlaylistStore {
    func playlists() throws -> [(name: String, modified: Date)] { list().map { ($0.name, $0.modified) } }

    func uris(of name: String) async throws -> [String] { try await entries(find(name)).map(\.location) }

    func write(_ name: String, uris: [String]) throws {
        try refuseSmart(name)
        try saved.save(name, entries: uris.map { PlaylistEntry(location: $0) })
    }

    func isSmart(_ name: String) -> Bool { (try? find(name))?.isSmart == true }
}

/// The queue continues from the library (tracks like the last ones) or from a playlist (its next track not queued).
extension PlaylistCatalog: QueueContinuation {
    func continuation(after recent: [TrackMetadata], excluding: Set<String>) async throws -> String? {
        try await library.continuation(after: recent, excluding: excluding)
    }

    func continuation(playlist name: String, excluding: Set<String>) async throws -> String? {
        try await entries(find(name)).first { !excluding.contains($0.location) }?.location
    }
}

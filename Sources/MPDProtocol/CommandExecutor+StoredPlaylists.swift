import Foundation
import TonearmCore

/// Stored playlists (mpd's names for Tonearm's saved playlists): listing, reading, loading into the queue, saving
/// the queue, and editing them in place. Every change wakes `idle stored_playlist`.
extension CommandExecutor {
    func storedPlaylistCommand(_ name: String, _ a: [String], _ r: inout Reply) async throws(MPDAck) {
        guard let store = playlists else {
            // A daemon without saved playlists: none exist, and none can be made.
            if name == "listplaylists" { return }
            if name == "save" { throw MPDAck(.system, "saving playlists is not supported by this Tonearm") }
            throw MPDAck(.noExist, "No such playlist")
        }
        switch name {
        case "listplaylists":
            try count(name, a, 0...0)
            for playlist in try attempt({ try store.playlists() }).sorted(by: { $0.name < $1.name }) {
                r.line("playlist", playlist.name)
                r.line("Last-Modified", Self.timestamp(playlist.modified))
            }
        case "listplaylist", "listplaylistinfo":
            try count(name, a, 1...2)
            let uris = try await entries(store, a[0])
            let window = a.count > 1 ? try Self.range(a[1], count: uris.count) : uris.indices
            let database = try await library.current()
            for uri in uris[window] {
                if name == "listplaylist" {
                    r.line("file", database.file(forURI: uri) ?? Self.displayed(uri))
                } else if let song = database.song(uri: uri) {
                    r.song(song)
                } else {
                    r.line("file", Self.displayed(uri))
                }
            }
        case "load":
            try count(name, a, 1...3)
            let uris = try await entries(store, a[0])
            let window = a.count > 1 ? try Self.range(a[1], count: uris.count) : uris.indices
            let position = try await insertPosition(a.count > 2 ? a[2] : nil)
            guard !window.isEmpty else { return }
            do {
                _ = try await player.add(Array(uris[window]), at: position)
            } catch {
                throw MPDAck(.playlistLoad, "cannot load \(a[0]): \((error as? TonearmError)?.message ?? "\(error)")")
            }
        case "save":
            try count(name, a, 1...2)
            let mode = a.count > 1 ? a[1] : "create"
            guard ["create", "append", "replace"].contains(mode) else { throw MPDAck(.arg, "Unrecognized save mode: \(mode)") }
            let queue = player.inspect { $0.tracks.map(\.uri) }
            let exists = store.exists(a[0])
            if mode == "create", exists { throw MPDAck(.exist, "Playlist already exists") }
            if mode != "create", !exists { throw MPDAck(.noExist, "No such playlist") }
            let before = try await mode == "append" ? entries(store, a[0]) : []
            try change(store, a[0], before + queue)
        case "rm":
            try count(name, a, 1...1)
            guard store.exists(a[0]) else { throw MPDAck(.noExist, "No such playlist") }
            try attempt { try store.remove(a[0]) }
            tracker.notify([.storedPlaylist])
        case "rename":
            try count(name, a, 2...2)
            try editable(store, a[0])
            let uris = try await entries(store, a[0])
            guard !store.exists(a[1]) else { throw MPDAck(.exist, "Playlist already exists") }
            try change(store, a[1], uris)
            try attempt { try store.remove(a[0]) }
        case "playlistadd":
            try count(name, a, 2...3)
            var uris = try await store.exists(a[0]) ? entries(store, a[0]) : []
            let added = try await self.uris(for: a[1], single: false)
            if a.count > 2 {
                guard let at = Int(a[2]), at >= 0, at <= uris.count else { throw .badSongIndex() }
                uris.insert(contentsOf: added, at: at)
            } else {
                uris += added
            }
            try change(store, a[0], uris)
        case "playlistclear":
            try count(name, a, 1...1)
            guard store.exists(a[0]) else { throw MPDAck(.noExist, "No such playlist") }
            try change(store, a[0], [])
        case "playlistdelete":
            try count(name, a, 2...2)
            var uris = try await entries(store, a[0])
            uris.removeSubrange(try Self.range(a[1], count: uris.count))
            try change(store, a[0], uris)
        case "playlistmove":
            try count(name, a, 3...3)
            var uris = try await entries(store, a[0])
            let from = try Self.range(a[1], count: uris.count)
            guard let to = Int(a[2]), to >= 0 else { throw .badSongIndex() }
            let moving = Array(uris[from])
            uris.removeSubrange(from)
            guard to <= uris.count else { throw .badSongIndex() }
            uris.insert(contentsOf: moving, at: to)
            try change(store, a[0], uris)
        case "searchaddpl", "findaddpl":
            guard a.count >= 2 else { throw .wrongArgumentCount(name) }
            let (filter, sort, window, _) = try Self.splitFilterArguments(name, Array(a.dropFirst()))
            let database = try await library.current()
            var songs = database.songs.filter(try filter.predicate(foldCase: name == "searchaddpl"))
            if let sort { songs = Self.sorted(songs, by: sort) }
            if let window { songs = Array(songs[window.clamped(to: songs.indices)]) }
            let before = try await store.exists(a[0]) ? entries(store, a[0]) : []
            try change(store, a[0], before + songs.map(\.uri))
        default:
            throw .unknownCommand(name)
        }
    }

    private func entries(_ store: any MPDPlaylistStore, _ name: String) async throws(MPDAck) -> [String] {
        do { return try await store.uris(of: name) } catch {
            // Only a failed read asks which failure it was (one folder listing per command, not two).
            guard store.exists(name) else { throw MPDAck(.noExist, "No such playlist") }
            throw MPDAck(.system, (error as? TonearmError)?.message ?? "\(error)")
        }
    }

    private func change(_ store: any MPDPlaylistStore, _ name: String, _ uris: [String]) throws(MPDAck) {
        try editable(store, name)
        try attempt { try store.write(name, uris: uris) }
        tracker.notify([.storedPlaylist])
    }

    /// A smart playlist changes only through its rules file.
    private func editable(_ store: any MPDPlaylistStore, _ name: String) throws(MPDAck) {
        if store.isSmart(name) {
            throw MPDAck(.system, "\(name) is a smart playlist: its tracks come from its rules (edit \(name).smart in the playlists folder)")
        }
    }

    /// The store's own error, as mpd's ACK for a playlist that cannot be read or written.
    private func attempt<T>(_ body: () throws -> T) throws(MPDAck) -> T {
        do { return try body() } catch {
            throw MPDAck(.system, (error as? TonearmError)?.message ?? "\(error)")
        }
    }

    /// A URI outside the library as clients show it: a local file by its path, anything else as it is.
    static func displayed(_ uri: String) -> String {
        uri.hasPrefix("file://") ? (URL(string: uri)?.path ?? uri) : uri
    }

    /// mpd's Last-Modified form, e.g. 2026-11-24T08:00:00Z.
    static func timestamp(_ date: Date) -> String {
        DateText.iso8601UTC(date)
    }
}

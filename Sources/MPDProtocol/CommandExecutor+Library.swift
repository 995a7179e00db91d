import Foundation
import TonearmCore

/// The library as mpd's database: browsing, filters, tag lists, counts, updates and cover art.
extension CommandExecutor {
    func libraryCommand(_ name: String, _ a: [String], _ r: inout Reply, client: ClientState) async throws(MPDAck) {
        switch name {
        case "lsinfo", "listfiles":
            try count(name, a, 0...1)
            let database = try await library.current()
            let path = MusicDatabase.normalize(a.first ?? "")
            if !database.isDirectory(path) {
                guard let song = database.song(file: path) else { throw MPDAck(.noExist, "No such directory") }
                if name == "lsinfo" { r.song(song) } else { r.line("file", song.file) }
                return
            }
            let (directories, songs) = database.children(of: path)
            for directory in directories { r.line("directory", directory) }
            for song in songs { if name == "lsinfo" { r.song(song) } else { r.line("file", song.file) } }
            // As mpd does for old clients, the root's lsinfo lists the stored playlists too (mpc lsplaylists reads it).
            if name == "lsinfo", path.isEmpty, let store = playlists, let stored = try? store.playlists() {
                for playlist in stored.sorted(by: { $0.name < $1.name }) {
                    r.line("playlist", playlist.name)
                    r.line("Last-Modified", Self.timestamp(playlist.modified))
                }
            }
        case "listall", "listallinfo":
            try count(name, a, 0...1)
            let database = try await library.current()
            let path = MusicDatabase.normalize(a.first ?? "")
            if !database.isDirectory(path) {
                guard let song = database.song(file: path) else { throw MPDAck(.noExist, "No such directory") }
                if name == "listall" { r.line("file", song.file) } else { r.song(song) }
                return
            }
            try listAll(database, path, info: name == "listallinfo", &r)
        case "find", "search":
            let (filter, sort, window, _) = try Self.splitFilterArguments(name, a)
            let database = try await library.current()
            var songs = database.songs.filter(try filter.predicate(foldCase: name == "search"))
            if let sort { songs = Self.sorted(songs, by: sort) }
            if let window { songs = Array(songs[window.clamped(to: songs.indices)]) }
            for song in songs { r.song(song) }
        case "findadd", "searchadd":
            let (filter, sort, window, position) = try Self.splitFilterArguments(name, a)
            let database = try await library.current()
            var songs = database.songs.filter(try filter.predicate(foldCase: name == "searchadd"))
            if let sort { songs = Self.sorted(songs, by: sort) }
            if let window { songs = Array(songs[window.clamped(to: songs.indices)]) }
            guard songs.count <= Player.maximumBatch else {
                throw MPDAck(.playlistMax, "at most \(Player.maximumBatch) songs at once, not \(songs.count)")
            }
            var at = PlayQueue.Position.end
            if let position {
                let ids = player.inspect { $0.tracks.map(\.id) }
                let target = try Self.integer(position)
                guard target >= 0, target <= ids.count else { throw .badSongIndex() }
                at = target == 0 ? .front : .after(ids[target - 1])
            }
            do { _ = try await player.add(songs.map(\.uri), at: at) } catch {
                throw MPDAck(.noExist, (error as? TonearmError)?.message ?? "\(error)")
            }
        case "list":
            try await list(a, &r)
        case "count":
            guard !a.isEmpty else { throw .wrongArgumentCount(name) }
            var rest = a
            var group: String?
            if rest.count >= 2, rest[rest.count - 2].lowercased() == "group" {
                group = try Self.tag(rest[rest.count - 1])
                rest.removeLast(2)
            }
            let database = try await library.current()
            let songs = rest.isEmpty ? database.songs : database.songs.filter(try SongFilter.parse(rest, oldFormContains: false).predicate(foldCase: false))
            if let group {
                var groups: [String: (Int, Double)] = [:]
                for song in songs {
                    let key = song.values(group).first ?? ""
                    groups[key, default: (0, 0)].0 += 1
                    groups[key, default: (0, 0)].1 += song.duration ?? 0
                }
                for key in groups.keys.sorted() {
                    r.line(group, key)
                    r.line("songs", groups[key]!.0)
                    r.line("playtime", Int(groups[key]!.1))
                }
            } else {
                r.line("songs", songs.count)
                r.line("playtime", Int(songs.reduce(0) { $0 + ($1.duration ?? 0) }))
            }
        case "update", "rescan":
            try count(name, a, 0...1)
            guard let source = librarySource else { throw MPDAck(.system, "Tonearm has no library") }
            if source.isScanning {
                r.line("updating_db", updateJobs.current)
                return
            }
            source.startRescan()
            r.line("updating_db", updateJobs.next())
        case "albumart", "readpicture":
            try count(name, a, 2...2)
            guard let offset = Int(a[1]), offset >= 0 else { throw MPDAck(.arg, "Integer expected: \(a[1])") }
            let art = try await artURL(for: a[0])
            guard let art, let url = URL(string: art), let data = FileManager.default.contents(atPath: url.path) else {
                // mpd: albumart fails when no picture exists, readpicture answers with nothing.
                if name == "readpicture" { return }
                throw MPDAck(.noExist, "No file exists")
            }
            guard offset <= data.count else { throw MPDAck(.arg, "Offset too large") }
            r.line("size", data.count)
            if name == "readpicture" { r.line("type", Self.mimeType(data)) }
            let chunk = data[data.startIndex + offset ..< data.startIndex + min(data.count, offset + client.binaryLimit)]
            r.binary(chunk)
        default:
            throw .unknownCommand(name)
        }
    }

    private func listAll(_ database: MusicDatabase, _ path: String, info: Bool, _ r: inout Reply) throws(MPDAck) {
        let (directories, songs) = database.children(of: path)
        for song in songs { if info { r.song(song) } else { r.line("file", song.file) } }
        for directory in directories {
            r.line("directory", directory)
            try listAll(database, directory, info: info, &r)
        }
    }

    /// The cover art of a song named by its library path or URI (a queue entry's own art when not indexed).
    private func artURL(for name: String) async throws(MPDAck) -> String? {
        let database = try await library.current()
        if let song = database.song(file: MusicDatabase.normalize(name)) ?? database.song(uri: name) { return song.artURL }
        let tracks = player.inspect { $0.tracks }
        if let track = tracks.first(where: { $0.uri == name || database.file(forURI: $0.uri) == name }) {
            return track.metadata.artUrl
        }
        guard name.contains("://") || database.uri(forFile: MusicDatabase.normalize(name)) != nil else {
            throw MPDAck(.noExist, "No such file")
        }
        return nil
    }

    /// `list TYPE [FILTER…] [group TYPE…]`, and the old `list album ARTIST`.
    private func list(_ a: [String], _ r: inout Reply) async throws(MPDAck) {
        guard let first = a.first else { throw .wrongArgumentCount("list") }
        let type = first.lowercased() == "file" ? "file" : try Self.tag(first)
        var rest = Array(a.dropFirst())
        var groups: [String] = []
        while rest.count >= 2, rest[rest.count - 2].lowercased() == "group" {
            groups.insert(try Self.tag(rest[rest.count - 1]), at: 0)
            rest.removeLast(2)
        }
        let filter: SongFilter?
        if rest.count == 1, !rest[0].hasPrefix("(") {
            guard type == "Album" else { throw MPDAck(.arg, "should be \"Album\" for 3 arguments") }
            filter = .compare(field: "Artist", .equal, rest[0])
        } else {
            filter = rest.isEmpty ? nil : try SongFilter.parse(rest, oldFormContains: false)
        }
        let database = try await library.current()
        let songs = try filter.map { f throws(MPDAck) in database.songs.filter(try f.predicate(foldCase: false)) } ?? database.songs
        // Rows of group values then the value, sorted and without duplicates; a group heading is written when it
        // changes, as mpd does.
        var rows: Set<[String]> = []
        for song in songs {
            let values = type == "file" ? [song.file] : song.values(type)
            let groupValues = groups.map { song.values($0).first ?? "" }
            for value in values.isEmpty ? [""] : values { rows.insert(groupValues + [value]) }
        }
        var last: [String]?
        for row in rows.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            var changed = false
            for i in groups.indices where changed || last == nil || last![i] != row[i] {
                r.line(groups[i], row[i])
                changed = true
            }
            r.line(type, row.last!)
            last = row
        }
    }

    static func tag(_ name: String) throws(MPDAck) -> String {
        guard let tag = MPDSong.canonicalTag(name) else { throw MPDAck(.arg, "Unknown tag type: \(name)") }
        return tag
    }

    /// A filter and the trailing `sort TAG`, `window START:END` and `position POS` of find/search(add).
    static func splitFilterArguments(_ name: String, _ a: [String]) throws(MPDAck)
        -> (SongFilter, sort: String?, window: Range<Int>?, position: String?) {
        var rest = a
        var sort: String?
        var window: Range<Int>?
        var position: String?
        while rest.count >= 3 || (rest.count == 2 && rest[0].hasPrefix("(")) {
            let key = rest[rest.count - 2].lowercased()
            let value = rest[rest.count - 1]
            if key == "sort" {
                sort = value
            } else if key == "window" {
                window = try range(value, count: Int.max)
            } else if key == "position" {
                position = value
            } else {
                break
            }
            rest.removeLast(2)
        }
        guard !rest.isEmpty else { throw .wrongArgumentCount(name) }
        return (try SongFilter.parse(rest, oldFormContains: name.hasPrefix("search")), sort, window, position)
    }

    static func sorted(_ songs: [MPDSong], by key: String) -> [MPDSong] {
        let descending = key.hasPrefix("-")
        let name = descending ? String(key.dropFirst()) : key
        let tag = MPDSong.canonicalTag(name)
        let sorted = songs.sorted { a, b in
            let x = tag.map { a.values($0).first ?? "" } ?? a.file
            let y = tag.map { b.values($0).first ?? "" } ?? b.file
            return x.localizedStandardCompare(y) == .orderedAscending
        }
        return descending ? sorted.reversed() : sorted
    }

    static func mimeType(_ data: Data) -> String {
        if data.starts(with: [0xFF, 0xD8]) { return "image/jpeg" }
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if data.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        return "application/octet-stream"
    }
}

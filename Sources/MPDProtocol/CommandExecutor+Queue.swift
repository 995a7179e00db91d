import Foundation
import TonearmCore

/// The queue (mpd's "current playlist"): adding, removing, moving, and reading it with versions.
extension CommandExecutor {
    func queueCommand(_ name: String, _ a: [String], _ r: inout Reply) async throws(MPDAck) {
        switch name {
        case "add", "addid":
            try count(name, a, 1...2)
            let uris = try await uris(for: a[0], single: name == "addid")
            let position = try await insertPosition(a.count > 1 ? a[1] : nil)
            let ids: [TrackID]
            do {
                ids = try await player.add(uris, at: position)
            } catch {
                throw MPDAck(.noExist, "cannot add \(a[0]): \((error as? TonearmError)?.message ?? "\(error)")")
            }
            if name == "addid", let id = ids.first { r.line("Id", id.serial ?? 0) }
        case "delete":
            try count(name, a, 1...1)
            let ids = player.inspect { $0.tracks.map(\.id) }
            for id in ids[try Self.range(a[0], count: ids.count)] { try? await player.remove(id) }
        case "deleteid":
            try count(name, a, 1...1)
            let id = try await id(forSongID: a[0])
            do { try await player.remove(id) } catch { throw .noSuchSong() }
        case "move", "moveid":
            try count(name, a, 2...2)
            var ids = player.inspect { $0.tracks.map(\.id) }
            let moving: [TrackID]
            if name == "move" {
                moving = Array(ids[try Self.range(a[0], count: ids.count)])
            } else {
                moving = [try await id(forSongID: a[0])]
            }
            let leaving = Set(moving)
            ids.removeAll { leaving.contains($0) }
            let to = try Self.integer(a[1])
            guard to >= 0, to <= ids.count else { throw .badSongIndex() }
            ids.insert(contentsOf: moving, at: to)
            try await reorder(ids)
        case "swap", "swapid":
            try count(name, a, 2...2)
            var ids = player.inspect { $0.tracks.map(\.id) }
            let first = name == "swap" ? try await id(atPosition: try Self.integer(a[0])) : try await id(forSongID: a[0])
            let second = name == "swap" ? try await id(atPosition: try Self.integer(a[1])) : try await id(forSongID: a[1])
            guard let i = ids.firstIndex(of: first), let j = ids.firstIndex(of: second) else { throw .noSuchSong() }
            ids.swapAt(i, j)
            try await reorder(ids)
        case "clear":
            try count(name, a, 0...0)
            await player.clear()
        case "shuffle":
            try count(name, a, 0...1)
            var ids = player.inspect { $0.tracks.map(\.id) }
            let range = a.isEmpty ? ids.indices : try Self.range(a[0], count: ids.count)
            ids[range].shuffle()
            try await reorder(ids)
        case "playlistinfo":
            try count(name, a, 0...1)
            let tracks = player.inspect { $0.tracks }
            let range = a.isEmpty ? tracks.indices : try Self.range(a[0], count: tracks.count)
            let database = try await library.current()
            for i in range { write(tracks[i], position: i, database, &r) }
        case "playlistid":
            try count(name, a, 0...1)
            let tracks = player.inspect { $0.tracks }
            let database = try await library.current()
            if let text = a.first {
                guard let serial = UInt64(text) else { throw MPDAck(.arg, "Integer expected: \(text)") }
                guard let i = tracks.firstIndex(where: { $0.id.serial == serial }) else { throw .noSuchSong() }
                write(tracks[i], position: i, database, &r)
            } else {
                for i in tracks.indices { write(tracks[i], position: i, database, &r) }
            }
        case "plchanges", "plchangesposid":
            try count(name, a, 1...2)
            guard let since = UInt32(a[0]) else { throw MPDAck(.arg, "Integer expected: \(a[0])") }
            let tracker = self.tracker
            let tracks = synced().0.tracks
            let changed = tracker.changed(since: since)
            let window = a.count > 1 ? try Self.range(a[1], count: tracks.count) : tracks.indices
            let database = name == "plchanges" ? try await library.current() : .empty
            for i in changed where window.contains(i) && i < tracks.count {
                if name == "plchanges" {
                    write(tracks[i], position: i, database, &r)
                } else {
                    r.line("cpos", i)
                    r.line("Id", tracks[i].id.serial ?? 0)
                }
            }
        case "playlistfind", "playlistsearch":
            guard !a.isEmpty else { throw .wrongArgumentCount(name) }
            let filter = try SongFilter.parse(a, oldFormContains: name == "playlistsearch")
            let matches = try filter.predicate(foldCase: name == "playlistsearch")
            let tracks = player.inspect { $0.tracks }
            let database = try await library.current()
            for (i, track) in tracks.enumerated() where matches(song(track, database)) { write(track, position: i, database, &r) }
        case "prio", "prioid", "rangeid":
            throw .notSupported(name)
        default:
            throw .unknownCommand(name)
        }
    }

    private func reorder(_ ids: [TrackID]) async throws(MPDAck) {
        do { try await player.reorder(ids) } catch { throw MPDAck(.playerSync, "the queue changed meanwhile; try again") }
    }

    /// Where `add`/`addid` put songs: at a position, relative to the current song (`+N`, `-N`), or at the end.
    func insertPosition(_ text: String?) async throws(MPDAck) -> PlayQueue.Position {
        guard let text else { return .end }
        let view = player.inspect { $0 }
        var target: Int
        if text.hasPrefix("+") || text.hasPrefix("-") {
            guard let current = view.currentID, let index = view.tracks.firstIndex(where: { $0.id == current }) else {
                throw MPDAck(.arg, "No current song")
            }
            let offset = try Self.integer(String(text.dropFirst()))
            target = text.hasPrefix("+") ? index + 1 + offset : index - offset
        } else {
            target = try Self.integer(text)
        }
        guard target >= 0, target <= view.tracks.count else { throw .badSongIndex() }
        return target == 0 ? .front : .after(view.tracks[target - 1].id)
    }

    /// What `add NAME` means: a song or a folder of the library (everything for "/"), or a URI / absolute path.
    func uris(for name: String, single: Bool) async throws(MPDAck) -> [String] {
        if name.contains("://") || name.hasPrefix("/") && !name.dropFirst().isEmpty && FileManager.default.fileExists(atPath: name) {
            return [name.hasPrefix("/") ? URL(fileURLWithPath: name).absoluteString : name]
        }
        let database = try await library.current()
        let path = MusicDatabase.normalize(name)
        if let uri = database.uri(forFile: path), !database.isDirectory(path) { return [uri] }
        guard database.isDirectory(path), !single else {
            throw MPDAck(.noExist, single && database.isDirectory(path) ? "addid takes one song, not a folder" : "No such directory")
        }
        let songs = database.songs(under: path)
        guard songs.count <= Player.maximumBatch else {
            throw MPDAck(.playlistMax, "at most \(Player.maximumBatch) songs at once, not \(songs.count)")
        }
        return songs.map(\.uri)
    }
}

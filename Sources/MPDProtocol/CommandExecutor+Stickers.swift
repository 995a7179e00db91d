import Foundation
import TonearmCore

/// mpd's sticker database over the listening history: a song's `rating` (0 to 10, half stars, as MPD clients write
/// it) can be read, set and deleted; `playcount` and `lastplayed` (Unix seconds) are read-only.
extension CommandExecutor {
    static let stickerNames = ["rating", "playcount", "lastplayed"]

    func stickerCommand(_ name: String, _ a: [String], _ r: inout Reply) async throws(MPDAck) {
        switch name {
        case "stickertypes":
            try count(name, a, 0...0)
            r.line("stickertype", "song")
        case "stickernames":
            try count(name, a, 0...0)
            for sticker in Self.stickerNames { r.line("name", sticker) }
        default:
            guard a.count >= 3 else { throw .wrongArgumentCount(name) }
            guard a[1] == "song" else { throw MPDAck(.arg, "unknown sticker domain") }
            guard let history = librarySource else { throw MPDAck(.noExist, "no sticker database: the library is off") }
            try await sticker(a[0], Array(a.dropFirst(2)), history, &r)
        }
    }

    private func sticker(_ operation: String, _ a: [String], _ history: any MPDLibrarySource, _ r: inout Reply) async throws(MPDAck) {
        switch operation {
        case "get":
            guard a.count == 2 else { throw .wrongArgumentCount("sticker") }
            let stickers = try await stickers(try await songURI(a[0]), history)
            guard let value = stickers.first(where: { $0.0 == a[1] })?.1 else { throw MPDAck(.noExist, "no such sticker") }
            r.line("sticker", "\(a[1])=\(value)")
        case "list":
            guard a.count == 1 else { throw .wrongArgumentCount("sticker") }
            for (name, value) in try await stickers(try await songURI(a[0]), history) { r.line("sticker", "\(name)=\(value)") }
        case "set":
            guard a.count == 3 else { throw .wrongArgumentCount("sticker") }
            guard a[1] == "rating" else {
                throw MPDAck(.arg, Self.stickerNames.contains(a[1]) ? "\(a[1]) is kept by the player and read-only" : "only the sticker rating can be set")
            }
            guard let value = Int(a[2]), (0...10).contains(value) else { throw MPDAck(.arg, "rating must be a whole number from 0 to 10") }
            try await rate(try await songURI(a[0]), value, history)
        case "delete":
            guard a.count == 1 || a.count == 2 else { throw .wrongArgumentCount("sticker") }
            if a.count == 2, a[1] != "rating" { throw MPDAck(.noExist, "no such sticker") }
            let uri = try await songURI(a[0])
            guard try await stickers(uri, history).contains(where: { $0.0 == "rating" }) || a.count == 1 else {
                throw MPDAck(.noExist, "no such sticker")
            }
            try await rate(uri, nil, history)
        case "find":
            guard a.count == 2 || a.count == 4 else { throw .wrongArgumentCount("sticker") }
            let database = try await library.current()
            let path = MusicDatabase.normalize(a[0])
            guard database.isDirectory(path) || database.song(file: path) != nil else { throw MPDAck(.noExist, "No such directory") }
            let songs = database.song(file: path).map { [$0] } ?? database.songs(under: path)
            let test: (String) -> Bool
            if a.count == 4 {
                let (op, wanted) = (a[2], a[3])
                guard ["=", "<", ">"].contains(op) else { throw MPDAck(.arg, "bad operator \(op)") }
                test = { value in
                    if let x = Int(value), let y = Int(wanted) { return op == "=" ? x == y : op == "<" ? x < y : x > y }
                    return op == "=" ? value == wanted : op == "<" ? value < wanted : value > wanted
                }
            } else {
                test = { _ in true }
            }
            for song in songs {
                guard let value = try await stickers(song.uri, history).first(where: { $0.0 == a[1] })?.1, test(value) else { continue }
                r.line("file", song.file)
                r.line("sticker", "\(a[1])=\(value)")
            }
        default:
            throw MPDAck(.arg, "bad request")
        }
    }

    /// The player's URI of a song named as mpd names it (a path in the music folder).
    private func songURI(_ file: String) async throws(MPDAck) -> String {
        let database = try await library.current()
        guard let uri = database.uri(forFile: MusicDatabase.normalize(file)) else { throw MPDAck(.noExist, "No such song") }
        return uri
    }

    private func stickers(_ uri: String, _ history: any MPDLibrarySource) async throws(MPDAck) -> [(String, String)] {
        let stats: TrackStats?
        do { stats = try await history.stats(uri: uri) } catch { throw MPDAck(.system, "cannot read the history: \(error)") }
        guard let stats else { return [] }
        var out: [(String, String)] = []
        if let rating = stats.rating { out.append(("rating", String(rating))) }
        if stats.playCount > 0 { out.append(("playcount", String(stats.playCount))) }
        if let last = stats.lastPlayed { out.append(("lastplayed", String(Int64(last.timeIntervalSince1970)))) }
        return out
    }

    private func rate(_ uri: String, _ halfStars: Int?, _ history: any MPDLibrarySource) async throws(MPDAck) {
        do { _ = try await history.setRating(uri: uri, halfStars: halfStars) } catch {
            throw MPDAck(.system, "cannot keep the rating: \(error)")
        }
        await player.refreshStats(uri: uri)
        // A rating may change what a smart playlist selects.
        tracker.notify([.sticker, .storedPlaylist])
    }
}

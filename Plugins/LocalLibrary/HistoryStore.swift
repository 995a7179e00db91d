import Foundation
import GRDB
import TonearmCore

/// The listening history in the library index: a row of counts and rating per track, and a row per listen. Each write
/// is one transaction of its own, so a kill -9 loses at most the listen under way.
extension LocalLibrary: ListeningHistory, QueueContinuation {
    /// The history key of a URI: a local file's content (so it survives a move or a rename), else the URI (with the
    /// title, for a live stream's song).
    static func historyKey(uri: String, title: String? = nil, live: Bool = false) -> String {
        if let url = URL(string: uri), url.isFileURL, let content = WaveformCache.contentKey(path: url.path) { return "c:" + content }
        if live, let title { return "u:\(uri)#\(title)" }
        return "u:" + uri
    }

    /// One history row per URI: the row now written for `key` takes `uri` from any other (the file's content
    /// changed, so its old key is history of what it was), and joins with the tracks stay one to one.
    static func claim(_ db: Database, uri: String, key: String) throws {
        try db.execute(sql: "UPDATE history SET uri = '' WHERE uri = ? AND key <> ?", arguments: [uri, key])
    }

    public func recordListen(_ listen: Listen) async throws -> TrackStats {
        let key = Self.historyKey(uri: listen.uri, title: listen.title, live: listen.isLive)
        let now = Date().timeIntervalSince1970
        return try await database.write { db in
            // A station's songs all share its URI; only a track's row stands for its URI.
            if !listen.isLive { try Self.claim(db, uri: listen.uri, key: key) }
            try db.execute(sql: "INSERT INTO listens (key, uri, title, artist, album, started_at, heard) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           arguments: [key, listen.uri, listen.title, listen.artists.joined(separator: "; "), listen.album,
                                       listen.startedAt.timeIntervalSince1970, listen.heard])
            try db.execute(sql: """
                INSERT INTO history (key, uri, play_count, first_played, last_played) VALUES (?, ?, 1, ?, ?)
                ON CONFLICT(key) DO UPDATE SET uri = excluded.uri, play_count = play_count + 1,
                    first_played = COALESCE(first_played, excluded.first_played), last_played = excluded.last_played
                """, arguments: [key, listen.uri, listen.startedAt.timeIntervalSince1970, now])
            return try Self.stats(db, key: key) ?? TrackStats()
        }
    }

    public func recordSkip(uri: String, at date: Date) async throws -> TrackStats {
        let key = Self.historyKey(uri: uri)
        return try await database.write { db in
            try Self.claim(db, uri: uri, key: key)
            try db.execute(sql: """
                INSERT INTO history (key, uri, skip_count) VALUES (?, ?, 1)
                ON CONFLICT(key) DO UPDATE SET uri = excluded.uri, skip_count = skip_count + 1
                """, arguments: [key, uri])
            return try Self.stats(db, key: key) ?? TrackStats()
        }
    }

    public func stats(uri: String) async throws -> TrackStats? {
        let key = Self.historyKey(uri: uri)
        return try await database.read { db in try Self.stats(db, key: key) }
    }

    public func setRating(uri: String, halfStars: Int?) async throws -> TrackStats {
        let key = Self.historyKey(uri: uri)
        return try await database.write { db in
            try Self.claim(db, uri: uri, key: key)
            try db.execute(sql: """
                INSERT INTO history (key, uri, rating) VALUES (?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET uri = excluded.uri, rating = excluded.rating
                """, arguments: [key, uri, halfStars])
            return try Self.stats(db, key: key) ?? TrackStats()
        }
    }

    public func listens(since: Date?, limit: Int) async throws -> [Listen] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM listens WHERE started_at >= ? ORDER BY started_at DESC, id DESC LIMIT ?",
                             arguments: [since?.timeIntervalSince1970 ?? 0, max(0, limit)]).map { row in
                let artist: String? = row["artist"]
                let key: String = row["key"]
                return Listen(uri: row["uri"], title: row["title"],
                              artists: artist.map { $0.components(separatedBy: "; ").filter { !$0.isEmpty } } ?? [],
                              album: row["album"], startedAt: Date(timeIntervalSince1970: row["started_at"]), heard: row["heard"],
                              isLive: key.hasPrefix("u:") && key.contains("#"))
            }
        }
    }

    public func ranked(_ ranking: HistoryRanking, limit: Int) async throws -> [(track: LibraryTrack, stats: TrackStats)] {
        let condition: String, order: String
        var arguments: StatementArguments = []
        switch ranking {
        case .top:
            condition = "h.play_count > 0"
            order = "h.play_count DESC, h.last_played DESC"
        case .recent:
            condition = "h.last_played IS NOT NULL"
            order = "h.last_played DESC"
        case .forgotten:
            condition = "(h.play_count > 0 OR h.rating >= 7) AND (h.last_played IS NULL OR h.last_played < ?)"
            order = "COALESCE(h.rating, -1) DESC, h.play_count DESC, h.last_played ASC"
            arguments = [Date().timeIntervalSince1970 - HistoryRanking.forgottenAfter]
        }
        _ = arguments.append(contentsOf: [max(0, limit)])
        let bound = arguments
        let columns = Index.trackColumns.split(separator: ",").map { "t." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(columns), h.play_count, h.skip_count, h.first_played, h.last_played, h.rating
                FROM tracks t JOIN history h ON h.uri = t.uri WHERE \(condition) ORDER BY \(order) LIMIT ?
                """, arguments: bound).map { row in
                let first: Double? = row["first_played"], last: Double? = row["last_played"]
                return (Index.track(row), TrackStats(playCount: row["play_count"], skipCount: row["skip_count"],
                                                     firstPlayed: first.map(Date.init(timeIntervalSince1970:)),
                                                     lastPlayed: last.map(Date.init(timeIntervalSince1970:)), rating: row["rating"]))
            }
        }
    }

    public func todaysPick(day: String) async throws -> LibraryTrack? {
        guard let start = Self.dayStart(day) else { throw TonearmError.invalidValue("a day is written 2026-11-27, not \(day)") }
        let heardBefore = start.timeIntervalSince1970 - TodaysPick.unheardFor
        let columns = Index.trackColumns.split(separator: ",").map { "t." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try await database.read { db in
            // Heard before the day began, not during it: the pick stays the same all day, even once it is played.
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(columns), h.rating, h.last_played FROM tracks t LEFT JOIN history h ON h.uri = t.uri
                WHERE h.last_played IS NULL OR h.last_played < ? OR h.last_played >= ? ORDER BY t.uri
                """, arguments: [heardBefore, start.timeIntervalSince1970])
            let choices = rows.map { row -> (LibraryTrack, Int?) in (Index.track(row), row["rating"]) }
            if let pick = TodaysPick.choose(choices, day: day) { return pick }
            // Everything was heard lately: the one heard longest ago.
            return try Row.fetchOne(db, sql: """
                SELECT \(columns) FROM tracks t JOIN history h ON h.uri = t.uri ORDER BY h.last_played ASC LIMIT 1
                """).map(Index.track)
        }
    }

    /// A track sharing the artist, album artist, genre or decade of the recent ones (the newest weighs most), not heard
    /// in the last week; any such track when none is alike; nil when the library has nothing left.
    public func continuation(after recent: [TrackMetadata], excluding: Set<String>) async throws -> String? {
        let weekAgo = Date().timeIntervalSince1970 - 7 * 86_400
        // Rows are read into values inside the read: GRDB's async read (off the caller's thread) returns only what is
        // Sendable, and a Row is not.
        let rows = try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT t.uri, t.artist, t.album_artist, t.genre, t.year FROM tracks t LEFT JOIN history h ON h.uri = t.uri
                WHERE h.last_played IS NULL OR h.last_played < ?
                """, arguments: [weekAgo]).map { row -> (uri: String, artist: String, albumArtist: String, genre: String?, year: Int?) in
                (row["uri"], row["artist"], row["album_artist"], row["genre"], row["year"])
            }
        }
        var best: (score: Int, uris: [String]) = (0, [])
        for (uri, artist, albumArtist, genre, year) in rows {
            guard !excluding.contains(uri) else { continue }
            var score = 1
            for (age, m) in recent.enumerated() {
                let weight = recent.count - age
                if !artist.isEmpty, m.artists.contains(artist) { score += 4 * weight }
                if !albumArtist.isEmpty, m.albumArtists.contains(albumArtist) { score += 3 * weight }
                if let genre, !genre.isEmpty, m.genres.contains(genre) { score += 2 * weight }
                if let year, let other = m.year, year / 10 == other / 10 { score += weight }
            }
            if score > best.score { best = (score, [uri]) } else if score == best.score { best.uris.append(uri) }
        }
        return best.uris.randomElement()
    }

    /// Midnight, local time, of a day written yyyy-MM-dd.
    static func dayStart(_ day: String) -> Date? {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd"
        return f.date(from: day)
    }

    static func stats(_ db: Database, key: String) throws -> TrackStats? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM history WHERE key = ?", arguments: [key]) else { return nil }
        let first: Double? = row["first_played"], last: Double? = row["last_played"]
        return TrackStats(playCount: row["play_count"], skipCount: row["skip_count"],
                          firstPlayed: first.map(Date.init(timeIntervalSince1970:)), lastPlayed: last.map(Date.init(timeIntervalSince1970:)),
                          rating: row["rating"])
    }
}

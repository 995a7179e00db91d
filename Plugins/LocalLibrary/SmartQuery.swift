import Foundation
import GRDB
import TonearmCore

/// A smart playlist's rules as one SQL query over the index: tracks joined with their listening history. Text is
/// compared case- and accent-insensitively (the folded keys); an unrated track counts as 0 stars and an unplayed one
/// as 0 plays; a track never played matches `notInTheLast` and no other test of when it was played.
struct SmartQuery {
    let sql: String
    let arguments: StatementArguments
    /// A limit by length is applied to the ordered rows afterwards.
    let seconds: TimeInterval?

    /// A track's history row: the history keeps one row per URI (HistoryStore), so this is a lookup in its URI index.
    static let historyJoin = "LEFT JOIN history h ON h.uri = t.uri"

    /// The fields only the history knows.
    static let historyFields: Set<SmartField> = [.rating, .playCount, .skipCount, .lastPlayed, .firstPlayed]

    init(_ rules: SmartRules, now: Date, calendar: Calendar = .current) {
        var arguments: StatementArguments = []
        let condition = Self.condition(rules.conditions, now: now, calendar: calendar, arguments: &arguments)
        let columns = Index.trackColumns.split(separator: ",").map { "t." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        // The history is joined only when the rules read it.
        let join = rules.fields.isDisjoint(with: Self.historyFields) ? "" : " " + Self.historyJoin
        var sql = "SELECT \(columns) FROM tracks t\(join) WHERE \(condition) ORDER BY "
        if rules.random {
            sql += "random()"
        } else {
            let keys = rules.sort.map { key in
                let e = Self.expression(key.field)
                return "\(e) IS NULL, \(e) \(key.descending ? "DESC" : "ASC")"
            }
            sql += (keys + ["t.artist_key, t.album_key, t.disc_number, t.track_number, t.title_key, t.uri"]).joined(separator: ", ")
        }
        switch rules.limit {
        case .tracks(let n):
            sql += " LIMIT ?"
            arguments += [n]
            seconds = nil
        case .seconds(let s): seconds = s
        case nil: seconds = nil
        }
        self.sql = sql
        self.arguments = arguments
    }

    /// The column or expression a field reads (NULL when unknown).
    static func expression(_ field: SmartField) -> String {
        switch field {
        case .title: "t.title_key"
        case .artist: "t.artist_key"
        case .album: "t.album_key"
        case .albumArtist: "t.album_artist_key"
        case .genre: "t.genre_key"
        case .path: "t.path_key"
        case .format: "tonearm_format(t.path)"
        case .year: "t.year"
        case .track: "t.track_number"
        case .disc: "t.disc_number"
        case .length: "t.duration"
        case .rating: "COALESCE(h.rating, 0)"
        case .playCount: "COALESCE(h.play_count, 0)"
        case .skipCount: "COALESCE(h.skip_count, 0)"
        case .lastPlayed: "h.last_played"
        case .firstPlayed: "h.first_played"
        case .added: "t.added"
        }
    }

    private static func condition(_ group: SmartGroup, now: Date, calendar: Calendar, arguments: inout StatementArguments) -> String {
        guard !group.conditions.isEmpty else { return "1" }
        let parts = group.conditions.map { condition -> String in
            switch condition {
            case .rule(let rule): "(" + Self.rule(rule, now: now, calendar: calendar, arguments: &arguments) + ")"
            case .group(let inner): "(" + Self.condition(inner, now: now, calendar: calendar, arguments: &arguments) + ")"
            }
        }
        return parts.joined(separator: group.kind == .all ? " AND " : " OR ")
    }

    private static func rule(_ rule: SmartRule, now: Date, calendar: Calendar, arguments: inout StatementArguments) -> String {
        let e = expression(rule.field)
        switch rule.value {
        case .text(let text):
            // Tags are compared by their folded keys; a missing genre is the empty text.
            let value = rule.field == .format ? text.lowercased() : foldKey(text)
            let column = "COALESCE(\(e), '')"
            arguments += [value]
            switch rule.op {
            case .is: return "\(column) = ?"
            case .isNot: return "\(column) <> ?"
            case .contains: return "instr(\(column), ?) > 0"
            case .notContains: return "instr(\(column), ?) = 0"
            default:
                arguments += [value]
                return "substr(\(column), 1, length(?)) = ?"
            }
        case .number(let raw):
            // Ratings are kept in half stars; lengths are compared to the second.
            let value: DatabaseValueConvertible = rule.field == .rating ? Int((raw * 2).rounded()) : raw
            let column = rule.field == .length ? "round(\(e))" : e
            arguments += [value]
            switch rule.op {
            case .is: return "\(column) = ?"
            case .isNot: return "(\(column) IS NULL OR \(column) <> ?)"
            case .gt: return "\(column) > ?"
            default: return "\(column) < ?"
            }
        case .span(let seconds):
            arguments += [now.timeIntervalSince1970 - seconds]
            return rule.op == .inTheLast ? "\(e) >= ?" : "(\(e) IS NULL OR \(e) < ?)"
        case .day(let year, let month, let day):
            let start = calendar.date(from: DateComponents(year: year, month: month, day: day)) ?? now
            if rule.op == .gt {
                // After the day: from the start of the next one.
                arguments += [(calendar.date(byAdding: .day, value: 1, to: start) ?? start).timeIntervalSince1970]
                return "\(e) >= ?"
            }
            arguments += [start.timeIntervalSince1970]
            return "\(e) < ?"
        }
    }

    /// The format a file's name says: its extension, lowercased (flac, mp3, ogg…).
    static func format(ofPath path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "" }
        return path[path.index(after: dot)...].lowercased()
    }

    /// Registers the SQL functions the queries use, on every connection.
    static func register(_ db: Database) {
        db.add(function: DatabaseFunction("tonearm_format", argumentCount: 1, pure: true) { values in
            guard let path = String.fromDatabaseValue(values[0]) else { return nil }
            return format(ofPath: path)
        })
    }
}

extension SmartRules {
    /// Every field its conditions and its order read.
    var fields: Set<SmartField> {
        func collect(_ group: SmartGroup) -> Set<SmartField> {
            group.conditions.reduce(into: []) { out, c in
                switch c {
                case .rule(let rule): out.insert(rule.field)
                case .group(let inner): out.formUnion(collect(inner))
                }
            }
        }
        return collect(conditions).union(random ? [] : sort.map(\.field))
    }
}

extension LocalLibrary {
    /// The tracks a smart playlist's rules select now, in its order.
    public func smartTracks(_ rules: SmartRules, now: Date = Date()) async throws -> [LibraryTrack] {
        let query = SmartQuery(rules, now: now)
        var tracks = try await database.read { db in try Row.fetchAll(db, sql: query.sql, arguments: query.arguments).map(Index.track) }
        if let seconds = query.seconds {
            var total = 0.0
            tracks = Array(tracks.prefix { track in
                total += track.duration
                return total <= seconds
            })
        }
        return tracks
    }

    /// A `.smart` file's tracks; throws `invalidPlaylist` with the line and the reason when its rules are wrong.
    public func smartTracks(file: URL) async throws -> [LibraryTrack] {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw TonearmError(.notReadable, "cannot read the smart playlist \(file.path): \(error.localizedDescription)")
        }
        do {
            return try await smartTracks(SmartRulesParser.parse(text))
        } catch let error as SmartRulesError {
            throw TonearmError(.invalidPlaylist, "\(file.lastPathComponent) \(error)")
        }
    }
}

extension LocalLibrary {
    /// A `.smart` file queued or activated is its tracks as they are now.
    public func expand(_ uri: URL) async throws -> PlaylistExpansion? {
        guard uri.isFileURL, uri.pathExtension.lowercased() == SmartPlaylistFile.pathExtension else { return nil }
        return PlaylistExpansion(uris: try await smartTracks(file: uri).map(\.uri))
    }
}

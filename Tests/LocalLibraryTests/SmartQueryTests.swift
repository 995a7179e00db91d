import Foundation
import RawPaths
import GRDB
import TestSupport
import Testing
import TonearmCore
@testable import LocalLibrary

/// Smart playlists evaluated by the real index (SQLite) over a generated library of a few thousand tracks with a
/// listening history, checked against a plain Swift reading of the same rules, for 150 random rules and the
/// tricky cases (unrated, never played, unknown year, nested groups, orders, limits).
@Suite(.serialized) struct SmartQueryTests {
    /// One generated track as the oracle sees it.
    struct Record {
        var uri: String, path: String, title: String, artist: String, album: String, albumArtist: String, genre: String?
        var year: Int?, track: Int?, disc: Int?, duration: Double, added: Double
        var rating: Int?, plays: Int, skips: Int, first: Double?, last: Double?
        /// The text fields as the index compares them (folded once: the oracle sorts thousands of times).
        var keys: [SmartField: String] = [:]
    }

    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let artists = ["Miles Davis", "The Beatles", "Björk", "Nina Simone", "Aphex Twin", "The Necks", "Ólafur Arnalds", "Can"]
    static let genres: [String?] = ["Jazz", "Rock", "Electronic", "Soul", "Ambient", nil, "jazz fusion", "Pop"]
    static let formats = ["flac", "mp3", "ogg", "opus", "wav"]

    /// `count` tracks and their history, written into a fresh index; the same seed gives the same library.
    static func generate(_ count: Int, seed: UInt64) async throws -> (LocalLibrary, [Record], Fixture) {
        let fixture = Fixture()
        let library = try fixture.open()
        var rng = SeededGenerator(seed: seed)
        var records: [Record] = []
        for i in 0..<count {
            let artist = artists.randomElement(using: &rng)!
            let albumNumber = Int.random(in: 1...6, using: &rng)
            let format = formats.randomElement(using: &rng)!
            let path = fixture.music.path + "/\(artist)/Album \(albumNumber)/\(i) Song.\(format)"
            let played = Int.random(in: 0...3, using: &rng) > 0
            let first = played ? now.timeIntervalSince1970 - Double.random(in: 0...(400 * 86_400), using: &rng) : nil
            records.append(Record(
                uri: RawPath(path).uri, path: path, title: "Song \(i) " + ["Blue", "Green", "Río", "Night"].randomElement(using: &rng)!,
                artist: artist, album: "Album \(albumNumber)", albumArtist: Bool.random(using: &rng) ? artist : "Various Artists",
                genre: genres.randomElement(using: &rng)!, year: Int.random(in: 0...5, using: &rng) == 0 ? nil : Int.random(in: 1955...2026, using: &rng),
                track: Int.random(in: 0...9, using: &rng) == 0 ? nil : Int.random(in: 1...14, using: &rng),
                disc: Int.random(in: 0...2, using: &rng) == 0 ? nil : Int.random(in: 1...2, using: &rng),
                duration: Double(Int.random(in: 30...900, using: &rng)) + [0, 0.4, 0.5, 0.6].randomElement(using: &rng)!,
                added: now.timeIntervalSince1970 - Double.random(in: 0...(3 * 365 * 86_400), using: &rng),
                rating: Int.random(in: 0...2, using: &rng) == 0 ? nil : Int.random(in: 0...10, using: &rng),
                plays: played ? Int.random(in: 1...40, using: &rng) : 0, skips: Int.random(in: 0...3, using: &rng),
                first: first, last: first.map { min(now.timeIntervalSince1970, $0 + Double.random(in: 0...(200 * 86_400), using: &rng)) }))
        }
        for i in records.indices {
            let r = records[i]
            records[i].keys = [.title: foldKey(r.title), .artist: foldKey(r.artist), .album: foldKey(r.album),
                               .albumArtist: foldKey(r.albumArtist), .genre: foldKey(r.genre ?? ""), .path: foldKey(r.path),
                               .format: SmartQuery.format(ofPath: r.path)]
        }
        let rows = records
        try await library.database.write { db in
            var writer = IndexWriter(generation: 1)
            for r in rows {
                let file = FoundFile(path: RawPath(r.path), uri: r.uri, size: 1000, mtime: 1, folderImage: nil)
                let tags = FileTags(title: r.title, artist: r.artist, album: r.album, albumArtist: r.albumArtist, genre: r.genre,
                                    year: r.year, trackNumber: r.track, discNumber: r.disc, duration: r.duration)
                try writer.writeTrack(db, file: file, tags: tags, artUrl: nil, exists: false, hadFailure: false)
                try db.execute(sql: "UPDATE tracks SET added = ? WHERE uri = ?", arguments: [r.added, r.uri])
                if r.rating != nil || r.plays > 0 || r.skips > 0 {
                    try db.execute(sql: """
                        INSERT INTO history (key, uri, play_count, skip_count, first_played, last_played, rating) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """, arguments: ["c:" + r.uri, r.uri, r.plays, r.skips, r.first, r.last, r.rating])
                }
            }
        }
        return (library, records, fixture)
    }

    // MARK: The oracle

    static func text(_ r: Record, _ field: SmartField) -> String { r.keys[field]! }

    static func number(_ r: Record, _ field: SmartField) -> Double? {
        switch field {
        case .year: r.year.map(Double.init)
        case .track: r.track.map(Double.init)
        case .disc: r.disc.map(Double.init)
        case .length: r.duration.rounded()
        case .rating: Double(r.rating ?? 0)
        case .playCount: Double(r.plays)
        case .skipCount: Double(r.skips)
        case .lastPlayed: r.last
        case .firstPlayed: r.first
        default: r.added
        }
    }

    static func holds(_ rule: SmartRule, _ r: Record) -> Bool {
        switch rule.value {
        case .text(let raw):
            let value = rule.field == .format ? raw.lowercased() : foldKey(raw), have = text(r, rule.field)
            switch rule.op {
            case .is: return have == value
            case .isNot: return have != value
            case .contains: return value.isEmpty || have.contains(value)
            case .notContains: return !value.isEmpty && !have.contains(value)
            default: return have.hasPrefix(value)
            }
        case .number(let raw):
            let value = rule.field == .rating ? (raw * 2).rounded() : raw
            guard let have = number(r, rule.field) else { return rule.op == .isNot }
            switch rule.op {
            case .is: return have == value
            case .isNot: return have != value
            case .gt: return have > value
            default: return have < value
            }
        case .span(let seconds):
            let since = now.timeIntervalSince1970 - seconds
            guard let have = number(r, rule.field) else { return rule.op == .notInTheLast }
            return rule.op == .inTheLast ? have >= since : have < since
        case .day(let y, let m, let d):
            let start = Calendar.current.date(from: DateComponents(year: y, month: m, day: d))!
            guard let have = number(r, rule.field) else { return false }
            return rule.op == .gt ? have >= Calendar.current.date(byAdding: .day, value: 1, to: start)!.timeIntervalSince1970
                                  : have < start.timeIntervalSince1970
        }
    }

    static func holds(_ group: SmartGroup, _ r: Record) -> Bool {
        let results = group.conditions.lazy.map { c -> Bool in
            switch c {
            case .rule(let rule): holds(rule, r)
            case .group(let inner): holds(inner, r)
            }
        }
        return group.kind == .all ? results.allSatisfy { $0 } : results.contains(true)
    }

    /// SQLite's order: unknown values last for every sort key, then album order (where NULL sorts first).
    static func ordered(_ records: [Record], _ sort: [SmartSort]) -> [Record] {
        func sortValue(_ r: Record, _ field: SmartField) -> (String?, Double?) {
            field.kind == .text ? (text(r, field), nil) : (nil, field == .length ? r.duration : number(r, field))
        }
        return records.sorted { a, b in
            for key in sort {
                let (x, y) = (sortValue(a, key.field), sortValue(b, key.field))
                let xNil = x.0 == nil && x.1 == nil, yNil = y.0 == nil && y.1 == nil
                if xNil != yNil { return yNil }
                if let s = x.0, let t = y.0, s != t { return key.descending ? s > t : s < t }
                if let s = x.1, let t = y.1, s != t { return key.descending ? s > t : s < t }
            }
            let ka = (a.keys[.artist]!, a.keys[.album]!), kb = (b.keys[.artist]!, b.keys[.album]!)
            if ka != kb { return ka < kb }
            if a.disc != b.disc { return (a.disc ?? Int.min) < (b.disc ?? Int.min) }
            if a.track != b.track { return (a.track ?? Int.min) < (b.track ?? Int.min) }
            if a.keys[.title]! != b.keys[.title]! { return a.keys[.title]! < b.keys[.title]! }
            return a.uri < b.uri
        }
    }

    static func expected(_ rules: SmartRules, _ records: [Record]) -> [String] {
        var out = ordered(records.filter { holds(rules.conditions, $0) }, rules.sort)
        switch rules.limit {
        case .tracks(let n): out = Array(out.prefix(n))
        case .seconds(let s):
            var total = 0.0
            out = Array(out.prefix { total += $0.duration; return total <= s })
        case nil: break
        }
        return out.map(\.uri)
    }

    // MARK: Random rules

    static func randomRule(_ rng: inout SeededGenerator) -> SmartRule {
        let field = SmartField.allCases.randomElement(using: &rng)!
        let op = field.operators.randomElement(using: &rng)!
        let value: SmartValue
        switch field.kind {
        case .text:
            let pool: [String] = switch field {
            case .artist, .albumArtist: artists + ["the", "BJORK", "various artists", "ólaf"]
            case .genre: ["jazz", "Jazz", "rock", "", "fusion", "AMBIENT"]
            case .format: ["flac", "MP3", "ogg", "aac"]
            case .path: ["Album 3", "/song", "beatles/album"]
            default: ["song 1", "blue", "rio", "Night", "Song"]
            }
            value = .text(pool.randomElement(using: &rng)!)
        case .number:
            let pool: [Double] = switch field {
            case .year: [1960, 1990, 2000, 2026]
            case .track: [1, 3, 7]
            case .disc: [1, 2]
            case .length: [30, 120, 300, 600, 601]
            case .rating: [0, 1.5, 2.5, 3, 4.5, 5]
            case .playCount: [0, 1, 5, 20]
            default: [0, 1, 2]
            }
            value = .number(pool.randomElement(using: &rng)!)
        case .date:
            if op == .inTheLast || op == .notInTheLast {
                value = .span([7, 30, 90, 365].randomElement(using: &rng)! * 86_400)
            } else {
                value = .day(year: [2025, 2026].randomElement(using: &rng)!, month: Int.random(in: 1...12, using: &rng), day: 15)
            }
        }
        return SmartRule(field, op, value)
    }

    static func randomGroup(_ rng: inout SeededGenerator, depth: Int) -> SmartGroup {
        let count = Int.random(in: 1...3, using: &rng)
        return SmartGroup(Bool.random(using: &rng) ? .all : .any, (0..<count).map { _ in
            depth < 2 && Int.random(in: 0...3, using: &rng) == 0 ? .group(randomGroup(&rng, depth: depth + 1)) : .rule(randomRule(&rng))
        })
    }

    @Test func randomRulesSelectWhatTheyMeanOverThreeThousandTracks() async throws {
        let (library, records, fixture) = try await Self.generate(3000, seed: 42)
        defer { withExtendedLifetime(fixture) {} }
        var rng = SeededGenerator(seed: 7)
        var nonEmpty = 0
        for round in 0..<150 {
            var rules = SmartRules(conditions: Self.randomGroup(&rng, depth: 0))
            if Bool.random(using: &rng) {
                rules.sort = (0..<Int.random(in: 1...2, using: &rng)).map { _ in
                    SmartSort(SmartField.allCases.randomElement(using: &rng)!, descending: Bool.random(using: &rng))
                }
            }
            switch Int.random(in: 0...3, using: &rng) {
            case 0: rules.limit = .tracks(Int.random(in: 1...200, using: &rng))
            case 1: rules.limit = .seconds(Double(Int.random(in: 1...20, using: &rng)) * 600)
            default: break
            }
            let want = Self.expected(rules, records)
            let got = try await library.smartTracks(rules, now: Self.now).map(\.uri)
            if !want.isEmpty { nonEmpty += 1 }
            #expect(got == want, "round \(round): \(rules)")
            if got != want { break }
        }
        #expect(nonEmpty > 75, "the random rules mostly select something (\(nonEmpty) of 150)")
    }

    @Test func theCasesThatNeedCare() async throws {
        let (library, records, fixture) = try await Self.generate(3000, seed: 3)
        defer { withExtendedLifetime(fixture) {} }
        func check(_ text: String, _ why: String, _ test: ([String], [Record]) -> Bool = { _, _ in true }) async throws {
            let rules = try SmartRulesParser.parse(text)
            let got = try await library.smartTracks(rules, now: Self.now).map(\.uri)
            #expect(got == Self.expected(rules, records), "\(why)\n\(text)")
            #expect(test(got, records), "\(why)\n\(text)")
        }
        let unrated = Set(records.filter { $0.rating == nil }.map(\.uri))
        try await check("rating lt 0.5", "an unrated track counts as 0 stars") { got, _ in unrated.isSubset(of: Set(got)) }
        let never = Set(records.filter { $0.last == nil }.map(\.uri))
        try await check("lastPlayed notInTheLast 30 days", "never played is not heard in the last 30 days") { got, _ in never.isSubset(of: Set(got)) }
        try await check("lastPlayed inTheLast 10 years", "never played is not heard lately either") { got, _ in never.isDisjoint(with: Set(got)) }
        try await check("year isNot 1990", "an unknown year is not 1990") { got, r in
            Set(r.filter { $0.year == nil }.map(\.uri)).isSubset(of: Set(got))
        }
        try await check("year lt 3000", "an unknown year is not before 3000") { got, r in got.count == r.filter { $0.year != nil }.count }
        try await check("genre is \"\"", "no genre is the empty text") { got, r in got.count == r.filter { $0.genre == nil }.count }
        try await check("artist is bjork", "text is compared without case or accents") { got, r in got.count == r.filter { $0.artist == "Björk" }.count }
        try await check("format is FLAC", "format is the extension, in any case") { got, r in got.count == r.filter { $0.path.hasSuffix(".flac") }.count }
        try await check("match any\nrating is 5\nall\n  playcount gt 30\n  genre is jazz\nsort rating desc, playcount desc\nlimit 25",
                        "nested groups, a sort and a limit") { got, _ in got.count == 25 }
        try await check("sort lastPlayed desc\nlimit 10 hours", "a limit by length keeps what fits") { got, r in
            let lengths = Dictionary(uniqueKeysWithValues: r.map { ($0.uri, $0.duration) })
            return got.map { lengths[$0]! }.reduce(0, +) <= 36_000
        }
        let shuffled = try await library.smartTracks(try SmartRulesParser.parse("genre is Jazz\nsort random"), now: Self.now).map(\.uri)
        #expect(Set(shuffled) == Set(Self.expected(try SmartRulesParser.parse("genre is Jazz"), records)), "random keeps the same tracks")
        #expect(try await library.smartTracks(SmartRules(), now: Self.now).count == 3000, "no conditions: the whole library")
    }

    @Test func aWrongRulesFileNamesItsLineAndAPlaylistFileExpands() async throws {
        let (library, records, fixture) = try await Self.generate(200, seed: 9)
        let good = fixture.dir.file("Loved.smart"), bad = fixture.dir.file("Broken.smart")
        try "# Loved\nrating gt 3\nsort rating desc\n".write(to: good, atomically: true, encoding: .utf8)
        try "rating gt 3\n\ngenre iz Jazz\n".write(to: bad, atomically: true, encoding: .utf8)
        let expansion = try #require(try await library.expand(good))
        let rules = try SmartRulesParser.parse(try String(contentsOf: good, encoding: .utf8))
        #expect(!expansion.uris.isEmpty && expansion.uris == Self.expected(rules, records))
        await #expect {
            _ = try await library.expand(bad)
        } throws: { error in
            let e = error as? TonearmError
            return e?.reason == .invalidPlaylist && e?.message == "Broken.smart line 3: unknown operator 'iz' (operators: is, isNot, contains, notContains, startsWith, gt, lt, inTheLast, notInTheLast)"
        }
        #expect(try await library.expand(fixture.dir.file("other.m3u")) == nil, "other playlists are Streams' to read")
    }
}


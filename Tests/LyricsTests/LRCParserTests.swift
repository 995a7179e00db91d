@testable import Lyrics
import Testing

/// The `.lrc` parser and the current-line search, as tables.
@Suite struct LRCParserTests {
    static let stamps: [(String, Int64?)] = [
        ("00:00.00", 0), ("01:02.50", 62_500_000), ("01:02.5", 62_500_000), ("01:02.503", 62_503_000),
        ("1:02", 62_000_000), ("12:00.01", 720_010_000), ("100:00.00", 6_000_000_000), ("01:02:50", 62_500_000),
        ("01:60.00", nil), ("ab:02.00", nil), ("01:02.", nil), ("", nil), ("ar:Someone", nil), ("01:-2.00", nil),
    ]

    @Test(arguments: stamps) func stamp(_ text: String, _ expected: Int64?) {
        #expect(LRCParser.timestamp(Substring(text)) == expected)
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var lrc: String
        var lines: [(Int64?, String)]
        var title: String? = nil
        var artist: String? = nil
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "plain stamps", lrc: "[00:01.00]One\n[00:02.50]Two\n[00:04.000]Three",
             lines: [(1_000_000, "One"), (2_500_000, "Two"), (4_000_000, "Three")]),
        Case(name: "headers and offset", lrc: "[ti:Song]\n[ar:Band]\n[al:Album]\n[offset:+500]\n[00:01.00]One\n[00:02.00]Two",
             lines: [(500_000, "One"), (1_500_000, "Two")], title: "Song", artist: "Band"),
        Case(name: "negative offset", lrc: "[offset:-250]\n[00:01.00]One", lines: [(1_250_000, "One")]),
        Case(name: "offset never below zero", lrc: "[offset:2000]\n[00:01.00]One", lines: [(0, "One")]),
        Case(name: "several stamps per line, unsorted", lrc: "[00:10.00][00:01.00]Chorus\n[00:05.00]Verse",
             lines: [(1_000_000, "Chorus"), (5_000_000, "Verse"), (10_000_000, "Chorus")]),
        Case(name: "same time keeps file order", lrc: "[00:03.00]B\n[00:01.00]A1\n[00:01.00]A2\n[00:03.00]C",
             lines: [(1_000_000, "A1"), (1_000_000, "A2"), (3_000_000, "B"), (3_000_000, "C")]),
        Case(name: "blank stamped line kept (instrumental)", lrc: "[00:01.00]One\n[00:02.00]\n[00:03.00]Two",
             lines: [(1_000_000, "One"), (2_000_000, ""), (3_000_000, "Two")]),
        Case(name: "CRLF, BOM, comments", lrc: "\u{FEFF}[00:01.00]One\r\nnot a stamp\r\n[by:me]\r\n[00:02.00] Two \r\n",
             lines: [(1_000_000, "One"), (2_000_000, "Two")]),
        Case(name: "no stamps: untimed", lrc: "[ti:T]\nFirst line\nSecond line\n", lines: [(nil, "First line"), (nil, "Second line")], title: "T"),
    ]

    @Test(arguments: cases) func parse(_ c: Case) throws {
        let lyrics = try #require(LRCParser.parse(c.lrc))
        #expect(lyrics.lines.map(\.start) == c.lines.map(\.0))
        #expect(lyrics.lines.map(\.text) == c.lines.map(\.1))
        #expect(lyrics.isSynced == c.lines.allSatisfy { $0.0 != nil })
        #expect(lyrics.title == c.title)
        #expect(lyrics.artist == c.artist)
    }

    @Test func nothingIsNil() {
        #expect(LRCParser.parse("") == nil)
        #expect(LRCParser.parse("[ti:x]\n[ar:y]\n") == nil)
    }

    @Test func enhancedWordTimes() throws {
        let lyrics = try #require(LRCParser.parse("""
            [offset:100]
            [00:12.00]<00:12.00>Twin<00:12.50>kle <00:13.00>twin<00:13.40>kle
            [00:20.00][00:40.00]<00:20.00>Lit<00:20.30>tle
            """))
        #expect(lyrics.lines.map(\.text) == ["Twinkle twinkle", "Little", "Little"])
        #expect(lyrics.lines[0].words == [
            LyricWord(start: 11_900_000, text: "Twin"), LyricWord(start: 12_400_000, text: "kle "),
            LyricWord(start: 12_900_000, text: "twin"), LyricWord(start: 13_300_000, text: "kle"),
        ])
        // The repeat keeps its word timing, moved with the line.
        #expect(lyrics.lines[2].start == 39_900_000)
        #expect(lyrics.lines[2].words.map(\.start) == [39_900_000, 40_200_000])
    }

    @Test func hasTimestamps() {
        #expect(LRCParser.hasTimestamps("intro\n[00:01.00]x"))
        #expect(!LRCParser.hasTimestamps("[ar:x]\nplain words [sic]\n"))
    }

    static let positions: [(Int64, Int?)] = [
        (0, nil), (999_999, nil), (1_000_000, 1), (1_500_000, 1), (2_999_999, 1), (3_000_000, 3), (9_000_000, 4),
    ]

    @Test(arguments: positions) func currentLine(_ position: Int64, _ expected: Int?) throws {
        // Two lines at 1 s and two at 3 s: the last of each pair is current (the last to have started).
        let lyrics = try #require(LRCParser.parse("[00:01.00]a\n[00:01.00]b\n[00:03.00]c\n[00:03.00]d\n[00:05.00]e"))
        #expect(lyrics.lineIndex(at: position) == expected)
    }

    static let nextChanges: [(Int64, Int64?)] = [(0, 1_000_000), (1_000_000, 3_000_000), (4_000_000, 5_000_000), (5_000_000, nil)]

    @Test(arguments: nextChanges) func nextChange(_ position: Int64, _ expected: Int64?) throws {
        let lyrics = try #require(LRCParser.parse("[00:01.00]a\n[00:01.00]b\n[00:03.00]c\n[00:05.00]e"))
        #expect(lyrics.nextChange(after: position) == expected)
    }

    @Test func untimedHasNoCurrentLine() {
        let lyrics = Lyrics(plainText: "one\n\ntwo\nthree", source: .tag)
        #expect(!lyrics.isSynced)
        #expect(lyrics.lineIndex(at: 5_000_000) == nil)
        #expect(lyrics.nextChange(after: 0) == nil)
        #expect(lyrics.lines.map(\.startsParagraph) == [false, true, false])
        #expect(lyrics.plainText == "one\n\ntwo\nthree")
    }

    @Test func mixedTimedAndUntimedIsUntimed() {
        let lyrics = Lyrics(lines: [LyricLine(start: 1, text: "a"), LyricLine(start: nil, text: "b")], source: .tag)
        #expect(!lyrics.isSynced)
        #expect(lyrics.lines.map(\.start) == [nil, nil])
    }

    static let encodings: [([UInt8], String)] = [
        (Array("naïve".utf8), "naïve"),
        ([0x6E, 0x61, 0xEF, 0x76, 0x65], "naïve"),            // Latin-1
        ([0x93, 0x48, 0x69, 0x94, 0x20, 0x80], "\u{201C}Hi\u{201D} €"), // Windows-1252 quotes and euro
        ([0xEF, 0xBB, 0xBF, 0x41], "A"),                       // UTF-8 BOM dropped
    ]

    @Test(arguments: encodings) func legacyText(_ bytes: [UInt8], _ expected: String) {
        #expect(LegacyText.decode(bytes) == expected)
    }
}

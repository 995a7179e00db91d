import Lyrics
import LyricsFiles
import Testing

/// Timed syllables joined into lines, as MIDI files and syllable-level SYLT frames give them.
@Suite struct SyllablesTests {
    @Test func syltSyllablesWithNewlines() {
        let lines = LyricsFiles.syltLines([(0, "\nTwin"), (500, "kle "), (1000, "twin"), (1500, "kle"), (2000, "\nLit"), (2500, "tle"),
                                           (3000, "\n"), (3500, "\nStar")])
        #expect(lines.map(\.text) == ["Twinkle twinkle", "Little", "Star"])
        #expect(lines.map(\.start) == [0, 2000, 3500])
        #expect(lines.map(\.startsParagraph) == [false, false, true])
        #expect(lines[0].words.map(\.start) == [0, 500, 1000, 1500])
    }

    @Test func syltLinesAsGiven() {
        let lines = LyricsFiles.syltLines([(0, "One "), (1000, " "), (2000, "Two")])
        #expect(lines.map(\.text) == ["One", "Two"])
        #expect(lines.map(\.start) == [0, 2000])
    }

    static let karaoke: [(String, [String], [Bool])] = [
        // Soft Karaoke: `\` paragraph, `/` line.
        ("\\Hel|lo |/world|\\Next", ["Hello", "world", "Next"], [false, false, true]),
        // General MIDI: CR line, LF paragraph, at the end of a syllable or alone.
        ("One |two\r|three\n|four|\r|five", ["One two", "three", "four", "five"], [false, false, true, false]),
        // Control characters other than breaks are dropped; lines of spaces vanish.
        ("a\u{0}b| \r|  |c", ["ab", "c"], [false, false]),
    ]

    @Test(arguments: karaoke) func midiMarks(_ joined: String, _ texts: [String], _ paragraphs: [Bool]) {
        let syllables = joined.split(separator: "|", omittingEmptySubsequences: false).enumerated().map { (start: Int64($0.offset), text: String($0.element)) }
        let lines = Syllables.join(syllables, marks: .init(slashes: true, lineFeedIsParagraph: true))
        #expect(lines.map(\.text) == texts)
        #expect(lines.map(\.startsParagraph) == paragraphs)
    }
}

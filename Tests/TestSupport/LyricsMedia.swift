import Foundation

/// MIDI files with words at known times, for the lyrics tests; each with its lines as they must come out.
public enum LyricsMedia {
    /// A line as expected: start in microseconds, text, word starts in microseconds.
    public struct Line: Sendable, Equatable {
        public var start: Int64
        public var text: String
        public var words: [Int64]
        public init(_ start: Int64, _ text: String, _ words: [Int64]) {
            self.start = start
            self.text = text
            self.words = words
        }
    }

    /// Soft Karaoke: `@` headers, then words in FF 01 text events (`\` paragraph, `/` line), one syllable in
    /// Windows-1252; 120 bpm, then 60 bpm from tick 960 (1 s): ticks 960/1200/1440/1920/2160 → 1, 1.5, 2, 3, 3.5 s.
    public static let karaoke = SMFBytes(format: 1, division: 480, tracks: [
        Ev.tempo(0, bpm: 120) + Ev.text(0, 0x01, "@KMIDI KARAOKE FILE") + Ev.text(0, 0x01, "@V0100")
            + Ev.text(0, 0x01, "@LENGL") + Ev.text(0, 0x01, "@TLittle Song") + Ev.text(0, 0x01, "@TThe Singers")
            + Ev.tempo(960, bpm: 60) + Ev.end(1920),
        Ev.name("Words") + Ev.text(0, 0x01, "@IWords track") + Ev.text(0, 0x01, "\\Hel") + Ev.text(240, 0x01, "lo ")
            + Ev.text(240, 0x01, "world") + Ev.text(480, 0x01, "/How ") + Ev.text(240, 0x01, "are ")
            + Ev.text(240, 0x01, "you") + Ev.text(480, 0x01, "\\Na") + Ev.meta(240, 0x01, [0xEF, 0x76, 0x65]) + Ev.end(240),
        Ev.program(0, channel: 0, 0) + Ev.notes(12, ticks: 240) + Ev.end(),
    ])
    public static let karaokeLines: [Line] = [
        Line(0, "Hello world", [0, 250_000, 500_000]),
        Line(1_000_000, "How are you", [1_000_000, 1_500_000, 2_000_000]),
        Line(3_000_000, "Naïve", [3_000_000, 3_500_000]),
    ]

    /// General MIDI Lyric events (FF 05; CR ends a line, LF a paragraph), two at one tick (file order), 120 bpm then
    /// 240 bpm from tick 960 (1 s): ticks 1440/1920/2400 → 1.25, 1.5, 1.75 s. A second track's single lyric is ignored.
    public static let generalMIDI = SMFBytes(format: 1, division: 480, tracks: [
        Ev.tempo(0, bpm: 120) + Ev.tempo(960, bpm: 240) + Ev.end(1920),
        Ev.text(0, 0x05, "One ") + Ev.text(480, 0x05, "two\r") + Ev.text(480, 0x05, "Three ") + Ev.text(480, 0x05, "four\n")
            + Ev.text(480, 0x05, "Five") + Ev.text(0, 0x05, " and") + Ev.text(480, 0x05, " six") + Ev.end(480),
        Ev.text(960, 0x05, "echo") + Ev.program(0, channel: 0, 0) + Ev.notes(16, ticks: 240) + Ev.end(),
    ])
    public static let generalMIDILines: [Line] = [
        Line(0, "One two", [0, 500_000]),
        Line(1_000_000, "Three four", [1_000_000, 1_250_000]),
        Line(1_500_000, "Five and six", [1_500_000, 1_500_000, 1_750_000]),
    ]

    /// Debian's openttd-openmsx: 144 FF 05 events in track 2, two verses sung over each other (scripts/install-deps).
    public static let cityBlues = "/usr/share/games/openttd/baseset/openmsx/city_blues_redfarn.mid"
}

import Foundation
import Lyrics
@testable import MIDI
import TestSupport
import Testing

/// The words of MIDI files: karaoke text, General MIDI lyric events, tempo changes, file order.
@Suite struct MIDILyricsTests {
    static func lines(_ lyrics: Lyrics?) -> [LyricsMedia.Line] {
        (lyrics?.lines ?? []).map { LyricsMedia.Line($0.start ?? -1, $0.text, $0.words.map(\.start)) }
    }

    @Test func softKaraoke() throws {
        let file = try SMFReader.read(LyricsMedia.karaoke.bytes)
        let lyrics = try #require(MIDILyrics.extract(file))
        #expect(Self.lines(lyrics) == LyricsMedia.karaokeLines)
        #expect(lyrics.lines.map(\.startsParagraph) == [false, false, true])
        #expect(lyrics.title == "Little Song" && lyrics.artist == "The Singers")
        #expect(lyrics.isSynced && lyrics.source == .midi)
        #expect(lyrics.plainText == "Hello world\nHow are you\n\nNaïve")
        #expect(MIDIFileInfo(file).hasLyrics)
    }

    @Test func generalMIDILyricEvents() throws {
        let file = try SMFReader.read(LyricsMedia.generalMIDI.bytes)
        let lyrics = try #require(MIDILyrics.extract(file))
        #expect(Self.lines(lyrics) == LyricsMedia.generalMIDILines)
        #expect(lyrics.lines.map(\.startsParagraph) == [false, false, true])
        #expect(lyrics.lines[2].words.map(\.text) == ["Five", " and", " six"])
    }

    @Test func textEventsAreLyricsOnlyInKaraokeFiles() throws {
        let bytes = SMFBytes(format: 0, division: 96, tracks: [Ev.text(0, 0x01, "Some comment") + Ev.text(96, 0x01, "another") + Ev.end()]).bytes
        let file = try SMFReader.read(bytes)
        #expect(MIDILyrics.extract(file) == nil)
        #expect(!MIDIFileInfo(file).hasLyrics)
        // With a .kar name they are the words.
        #expect(Self.lines(MIDILyrics.extract(file, karaoke: true)) == [LyricsMedia.Line(0, "Some commentanother", [0, 500_000])])
        #expect(MIDIFileInfo(file, karaoke: true).hasLyrics)
    }

    @Test func formatTwoPatternsPlayOneAfterAnother() throws {
        // Pattern 1 lasts 2 quarters at 60 bpm (2 s); the words are in pattern 2 at 120 bpm.
        let bytes = SMFBytes(format: 2, division: 96, tracks: [
            Ev.tempo(0, bpm: 60) + Ev.notes(2, ticks: 96) + Ev.end(),
            Ev.text(0, 0x05, "X\r") + Ev.text(96, 0x05, "Y") + Ev.notes(2, ticks: 96) + Ev.end(),
        ]).bytes
        let lyrics = try #require(MIDILyrics.extract(try SMFReader.read(bytes)))
        #expect(Self.lines(lyrics) == [LyricsMedia.Line(2_000_000, "X", [2_000_000]), LyricsMedia.Line(2_500_000, "Y", [2_500_000])])
    }

    /// Files with tempo changes are played from a fixed-tempo rewrite: its words come at the same moments.
    @Test(arguments: [LyricsMedia.karaoke, LyricsMedia.generalMIDI])
    func renditionKeepsTheTimes(_ source: SMFBytes) throws {
        let file = try SMFReader.read(source.bytes)
        let played = try #require(Rendition.playable(file))
        let heard = try SMFReader.read(SMFWriter.bytes(played))
        #expect(Rendition.changesTempo(file) && !Rendition.changesTempo(heard))
        let original = try #require(MIDILyrics.extract(file)).lines
        let rendered = try #require(MIDILyrics.extract(heard)).lines
        #expect(original.map(\.text) == rendered.map(\.text))
        for (a, b) in zip(original, rendered) {
            #expect(abs(a.start! - b.start!) <= 1_000, "\(a.text): \(a.start!) µs, heard at \(b.start!) µs")
            #expect(zip(a.words, b.words).allSatisfy { abs($0.start - $1.start) <= 1_000 })
        }
    }

    @Test func openMSXCityBlues() throws {
        let file = try SMFReader.read(contentsOf: URL(fileURLWithPath: LyricsMedia.cityBlues))
        // The syllables as the file holds them, track 2 in file order.
        var syllables: [(tick: Int, text: String)] = []
        for event in file.tracks[1].events {
            if case .meta(0x05, let data) = event.kind { syllables.append((event.tick, String(decoding: data, as: UTF8.self))) }
        }
        #expect(syllables.count == 144)
        let lyrics = try #require(MIDILyrics.extract(file))
        let words = lyrics.lines.flatMap(\.words)
        #expect(words.count == 144)
        #expect(words.map(\.text) == syllables.map(\.text))
        // 256 ticks a quarter at 120 bpm: a tick is 1/512 s.
        #expect(words.map(\.start) == syllables.map { Int64($0.tick) * 1_000_000 / 512 })
        // The two verses sung at once stay in file order: "ci" "ci" "ty " "ty ".
        #expect(lyrics.lines[0].text == "1. If you're going to the cicity ty")
        #expect(lyrics.lines[0].start == 2_500_000)
        #expect(lyrics.lines.count > 8)
        #expect(MIDIFileInfo(file).hasLyrics)
    }
}

import Foundation
import Testing
@testable import MIDI
import TestSupport

@Suite struct SMFReaderTests {
    @Test func formatZeroWithRunningStatusTempoAndMeta() throws {
        let track = Ev.name("Minuet") + Ev.text(0, 0x02, "© 1725 J. S. Bach") + Ev.tempo(0, bpm: 120)
            + Ev.meta(0, 0x58, [3, 2, 24, 8]) + Ev.meta(0, 0x59, [0xFD, 0]) + Ev.program(0, channel: 0, 73)
            + Ev.sysex(0, [0x7E, 0x7F, 0x09, 0x01, 0xF7]) + Ev.notes(8, ticks: 480) + Ev.end()
        let file = try SMFReader.read(SMFBytes(format: 0, division: 480, tracks: [track]).bytes)
        #expect(file.format == 0)
        #expect(file.division == .ticksPerQuarter(480))
        #expect(file.tracks.count == 1)
        let notes = file.tracks[0].events.filter { if case .channel(let s, _) = $0.kind { s & 0xF0 == 0x90 } else { false } }
        #expect(notes.count == 16) // 8 on + 8 off (velocity 0), all through running status
        #expect(file.tracks[0].events.contains { $0.kind == .sysex(status: 0xF0, data: [0x7E, 0x7F, 0x09, 0x01, 0xF7]) })
        let info = MIDIFileInfo(file)
        #expect(info.title == "Minuet")
        #expect(info.copyright == "© 1725 J. S. Bach")
        #expect(info.timeSignature == "3/4")
        #expect(info.keySignature == "E♭ major")
        #expect(info.instruments == ["Flute"])
        #expect(info.channelCount == 1)
        #expect(info.trackCount == 1)
        #expect(abs(info.duration - 4.0) < 1e-9) // 8 quarters at 120 bpm
        #expect(info.initialBPM.map { abs($0 - 120) < 0.01 } == true)
        #expect(info.hasLyrics == false)
        #expect(Rendition.playable(file) == nil, "one tempo from the start: midiparse plays it as it is")
    }

    @Test func formatOneTempoChangesAcrossTracks() throws {
        // Conductor track: 120 bpm, then 60 bpm after 4 quarters. Music track: 8 quarters.
        let conductor = Ev.name("Song") + Ev.tempo(0, bpm: 120) + Ev.tempo(4 * 96, bpm: 60) + Ev.end()
        let piano = Ev.name("Piano") + Ev.program(0, channel: 0, 0) + Ev.notes(8, ticks: 96) + Ev.end()
        let drums = Ev.on(0, channel: 9, 36) + Ev.off(96, channel: 9, 36) + Ev.program(0, channel: 1, 40) + Ev.on(0, channel: 1, 64)
            + Ev.off(96, channel: 1, 64) + Ev.end()
        let file = try SMFReader.read(SMFBytes(format: 1, division: 96, tracks: [conductor, piano, drums]).bytes)
        let info = MIDIFileInfo(file)
        #expect(info.title == "Song")
        #expect(info.trackCount == 3)
        #expect(info.channelCount == 3)
        #expect(info.instruments == ["Acoustic Grand Piano", "Percussion", "Violin"])
        // 4 quarters at 0.5 s + 4 at 1 s
        #expect(abs(info.duration - 6.0) < 1e-9)
        #expect(abs(TempoMap(file).seconds(atTick: 4 * 96 + 48) - 2.5) < 1e-9)
        // midiparse would time it all at the last tempo: it plays a rendition at one tempo instead.
        let playable = try #require(Rendition.playable(file))
        #expect(playable.format == 1 && playable.tracks.count == 3)
        #expect(!Rendition.changesTempo(playable))
        #expect(abs(playable.duration - 6.0) < 1e-3)
        #expect(abs(TempoMap(playable).seconds(atTick: playable.tracks[1].events.last { if case .channel = $0.kind { true } else { false } }!.tick) - 6.0) < 1e-3)
    }

    @Test func formatTwoPlaysPatternsOneAfterAnother() throws {
        let a = Ev.tempo(0, bpm: 60) + Ev.notes(2, ticks: 100) + Ev.end() // 2 s
        let b = Ev.notes(4, ticks: 100) + Ev.end() // default 120 bpm: 2 s
        let file = try SMFReader.read(SMFBytes(format: 2, division: 100, tracks: [a, b]).bytes)
        #expect(file.format == 2)
        #expect(abs(file.duration - 4.0) < 1e-9)
        let playable = try #require(Rendition.playable(file))
        #expect(playable.format == 0)
        #expect(abs(playable.duration - 4.0) < 1e-9)
        let again = try SMFReader.read(SMFWriter.bytes(playable))
        #expect(abs(again.duration - 4.0) < 1e-3)
        #expect(Rendition.playable(again) == nil)
    }

    @Test func smpteDivisionIgnoresTempo() throws {
        // 25 fps × 40 ticks = 1000 ticks per second; a tempo event must not change that.
        let track = Ev.tempo(0, bpm: 200) + Ev.notes(3, ticks: 500) + Ev.end(250)
        let file = try SMFReader.read(SMFBytes(format: 0, division: SMFBytes.smpte(fps: 25, ticksPerFrame: 40), tracks: [track]).bytes)
        #expect(file.division == .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        #expect(abs(file.duration - 1.75) < 1e-9)
        #expect(MIDIFileInfo(file).initialBPM == nil)
        let playable = try #require(Rendition.playable(file))
        #expect(abs(try SMFReader.read(SMFWriter.bytes(playable)).duration - 1.75) < 1e-6)

        let dropFrame = try SMFReader.read(SMFBytes(format: 0, division: SMFBytes.smpte(fps: 29, ticksPerFrame: 100), tracks: [Ev.end(2997)]).bytes)
        #expect(abs(dropFrame.duration - 1.0) < 1e-9)
        let rendered = try SMFReader.read(SMFWriter.bytes(try #require(Rendition.playable(dropFrame))))
        #expect(abs(rendered.duration - 1.0) < 1e-5)
    }

    @Test func karaokeLyrics() throws {
        let words = Ev.text(0, 0x01, "@KMIDI KARAOKE FILE") + Ev.text(0, 0x01, "@TTwinkle") + Ev.text(0, 0x01, "\\Twin")
            + Ev.text(96, 0x01, "kle") + Ev.end()
        let music = Ev.notes(2, ticks: 96) + Ev.end()
        let kar = try SMFReader.read(SMFBytes(format: 1, division: 96, tracks: [music, words]).bytes)
        let info = MIDIFileInfo(kar, karaoke: true)
        #expect(info.hasLyrics)
        #expect(info.title == "Twinkle")
        let lyricEvents = try SMFReader.read(SMFBytes(format: 0, division: 96, tracks: [Ev.text(0, 0x05, "la ") + Ev.end(96)]).bytes)
        #expect(MIDIFileInfo(lyricEvents).hasLyrics)
    }

    @Test func latin1TextAndRiffWrapper() throws {
        let track = Ev.meta(0, 0x03, [0x43, 0x61, 0x66, 0xE9]) + Ev.end(10) // "Café" in Latin-1
        let smf = SMFBytes(format: 0, division: 96, tracks: [track]).bytes
        #expect(MIDIFileInfo(try SMFReader.read(smf)).title == "Café")
        let riff = Array("RIFF".utf8) + le32(UInt32(4 + 8 + smf.count)) + Array("RMIDdata".utf8) + le32(UInt32(smf.count)) + smf
        #expect(SMFReader.hasMIDISignature(Array(riff.prefix(12))))
        #expect(MIDIFileInfo(try SMFReader.read(riff)).title == "Café")
    }

    @Test func missingEndOfTrackStillReads() throws {
        let file = try SMFReader.read(SMFBytes(format: 0, division: 96, tracks: [Ev.notes(2, ticks: 96)]).bytes)
        #expect(file.tracks[0].hasEndOfTrack == false)
        #expect(abs(file.duration - 1.0) < 1e-9)
    }

    @Test(arguments: [
        (Bytes.empty, "the file is empty (0 bytes)"),
        (Bytes.wav, "header chunk is 'RIFF'"),
        (Bytes.shortHeader, "ends inside the header chunk"),
        (Bytes.pastEnd, "track 3: chunk length 9000 runs past end of file at byte"),
        (Bytes.missingTrack, "the header announces 3 tracks, but the file ends after 2"),
        (Bytes.badFormat, "unknown format 7"),
        (Bytes.formatZeroTwoTracks, "format 0 holds exactly one track, but the header announces 2"),
        (Bytes.zeroDivision, "time division of 0 ticks per quarter note"),
        (Bytes.badSMPTE, "SMPTE time division with 23 frames per second"),
        (Bytes.noRunningStatus, "track 1: data byte 0x3C at byte 23 without a running status"),
        (Bytes.undefinedStatus, "track 1: undefined status byte 0xF4 at byte 23"),
        (Bytes.eventPastTrack, "track 1: the event at byte 23 runs past the end of the track at byte 25"),
        (Bytes.garbageChunk, "track 1: expected an 'MTrk' chunk at byte 14, found bytes"),
    ])
    func malformedFilesSayWhatAndWhere(_ bytes: [UInt8], _ expected: String) {
        #expect {
            _ = try SMFReader.read(bytes)
        } throws: { error in
            guard let error = error as? SMFError else { return false }
            return error.message.contains(expected)
        }
    }

    @Test func pastEndMessageNamesTheFileSize() {
        let bytes = Bytes.pastEnd
        #expect(throws: SMFError("track 3: chunk length 9000 runs past end of file at byte \(bytes.count)")) {
            try SMFReader.read(bytes)
        }
    }
}

func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

/// Malformed files, each wrong in one way.
enum Bytes {
    static let good = Ev.notes(2, ticks: 96) + Ev.end()
    static let empty: [UInt8] = []
    static let wav: [UInt8] = Array("RIFF".utf8) + le32(36) + Array("WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 24)
    static let shortHeader: [UInt8] = Array("MThd".utf8) + be32(6) + [0, 1]
    static var pastEnd: [UInt8] {
        var b = SMFBytes(format: 1, division: 96, tracks: [good, good]).bytes
        b[11] = 3
        return b + Array("MTrk".utf8) + be32(9000) + good
    }
    static var missingTrack: [UInt8] { SMFBytes(format: 1, division: 96, tracks: [good, good], announcedTracks: 3).bytes }
    static var badFormat: [UInt8] { SMFBytes(format: 7, division: 96, tracks: [good]).bytes }
    static var formatZeroTwoTracks: [UInt8] { SMFBytes(format: 0, division: 96, tracks: [good, good]).bytes }
    static var zeroDivision: [UInt8] { SMFBytes(format: 0, division: 0, tracks: [good]).bytes }
    static var badSMPTE: [UInt8] { SMFBytes(format: 0, division: SMFBytes.smpte(fps: 23, ticksPerFrame: 4), tracks: [good]).bytes }
    // Track data starts at byte 22 (14 header + 8 chunk header); the first status byte follows a 1-byte delta.
    static var noRunningStatus: [UInt8] { SMFBytes(format: 0, division: 96, tracks: [[0, 0x3C, 0x40] + Ev.end()]).bytes }
    static var undefinedStatus: [UInt8] { SMFBytes(format: 0, division: 96, tracks: [[0, 0xF4] + Ev.end()]).bytes }
    static var eventPastTrack: [UInt8] { SMFBytes(format: 0, division: 96, tracks: [[0, 0x90, 0x3C]]).bytes }
    static var garbageChunk: [UInt8] {
        Array("MThd".utf8) + be32(6) + be16(0) + be16(1) + be16(96) + [0x00, 0x01, 0x02, 0x03] + be32(4) + good
    }
}

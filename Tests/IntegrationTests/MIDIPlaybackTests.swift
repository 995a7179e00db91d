import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// MIDI files through the real daemon and FluidSynth, rendered to WAV and read back.
@Suite(.serialized, .timeLimit(.minutes(4))) struct MIDIPlaybackTests {
    static let wavSink = "audioconvert ! audio/x-raw,format=S16LE,rate=44100,channels=2 ! wavenc ! filesink location="

    /// Generated files, each with the length worked out by hand.
    static let cases: [(name: String, file: SMFBytes, seconds: Double)] = [
        // 8 quarters at the default 120 bpm, notes through running status.
        ("format0.mid", SMFBytes(format: 0, division: 480, tracks: [Ev.name("Format zero") + Ev.notes(8, ticks: 480) + Ev.end()]), 4.0),
        // Conductor: 4 quarters at 120 bpm then 4 at 240 bpm: 2 s + 1 s.
        ("tempo changes.mid", SMFBytes(format: 1, division: 96, tracks: [
            Ev.tempo(0, bpm: 120) + Ev.tempo(4 * 96, bpm: 240) + Ev.end(4 * 96),
            Ev.program(0, channel: 0, 19) + Ev.notes(8, ticks: 96) + Ev.end(),
            Ev.program(0, channel: 1, 32) + Ev.notes(4, ticks: 192, channel: 1, key: 36) + Ev.end(),
        ]), 3.0),
        // Two patterns one after another: 2 s at 60 bpm, then 1.5 s at 120 bpm.
        ("patterns.mid", SMFBytes(format: 2, division: 120, tracks: [
            Ev.tempo(0, bpm: 60) + Ev.notes(2, ticks: 120) + Ev.end(),
            Ev.notes(3, ticks: 120, key: 67) + Ev.end(),
        ]), 3.5),
        // SMPTE 25 fps × 40 ticks = 1000 ticks/s; its tempo event means nothing.
        ("smpte.mid", SMFBytes(format: 0, division: SMFBytes.smpte(fps: 25, ticksPerFrame: 40), tracks: [
            Ev.tempo(0, bpm: 30) + Ev.notes(5, ticks: 500) + Ev.end(),
        ]), 2.5),
        // Karaoke: lyrics in text events of a words track.
        ("song.kar", SMFBytes(format: 1, division: 96, tracks: [
            Ev.notes(6, ticks: 96, key: 64) + Ev.end(),
            Ev.text(0, 0x01, "@KMIDI KARAOKE FILE") + Ev.text(0, 0x01, "@TLittle song") + Ev.text(0, 0x01, "\\Twin")
                + Ev.text(96, 0x01, "kle") + Ev.end(),
        ]), 3.0),
    ]

    static func midiFolder(_ d: Daemon) throws -> URL {
        let folder = d.home.url.appendingPathComponent("Music/MIDI")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: 0..<cases.count)
    func rendersNotSilentAndAsLongAsComputed(_ index: Int) async throws {
        let (name, file, seconds) = Self.cases[index]
        let d = try Daemon()
        let url = try Self.midiFolder(d).appendingPathComponent(name)
        try file.write(to: url)
        let out = d.media.file("rendered.wav")
        // Stopped counts only after Playing: the daemon is Stopped, and the file already open, before the song starts.
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([url.path], sink: Self.wavSink + out.path)
        try await d.waitForTheEnd("played to the end", after: changes)
        let metadata = try await d.metadata()
        #expect(metadata["mpris:length"]?.int64Value.map { abs($0 - Int64(seconds * 1e6)) <= 50_000 } == true,
                "\(name): mpris:length \(String(describing: metadata["mpris:length"]))")
        #expect(metadata["xesam:title"]?.stringValue?.isEmpty == false)
        _ = await d.terminate()

        let wav = try d.rendering(out)
        #expect(abs(wav.seconds - seconds) <= 0.05, "\(name): rendered \(wav.seconds) s, computed \(seconds) s")
        let peak = wav.samples.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 300, "\(name): silent (peak \(peak))")
    }

    @Test func metadataComesFromTheFile() async throws {
        let d = try Daemon()
        let folder = try Self.midiFolder(d)
        let named = folder.appendingPathComponent("a.mid")
        try Self.cases[0].file.write(to: named)
        let karaoke = folder.appendingPathComponent("song.kar")
        try Self.cases[4].file.write(to: karaoke)
        try await d.start([named.path, karaoke.path])
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "Format zero")
        #expect(try await d.metadata()["xesam:url"]?.stringValue == named.absoluteString)
        #expect(try await d.get(Daemon.player, "CanSeek") == .bool(true))
        let ids = try await d.tracks()
        let second = try await d.call(Daemon.trackList, "GetTracksMetadata", [.array(element: "o", [.objectPath(ids[1])])])
        let meta = second.first?.arrayValue?.first?.vardictValue
        #expect(meta?["xesam:title"]?.stringValue == "Little song")
        #expect(meta?["mpris:length"]?.int64Value == 3_000_000)
    }

    @Test func seekingInsideAMIDITrackWorks() async throws {
        let d = try Daemon()
        // 24 quarters at 120 bpm: 12 s, one note per quarter, so every second of it is audible; long enough that a
        // loaded machine stalling the test for seconds before the seek still leaves 3 s to skip.
        let url = try Self.midiFolder(d).appendingPathComponent("long.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.program(0, channel: 0, 0) + Ev.notes(24, ticks: 96) + Ev.end()]).write(to: url)
        let out = d.media.file("seeked.wav")
        let seeked = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.player, member: "Seeked"))
        try await d.start([url.path], sink: Self.wavSink.replacingOccurrences(of: "filesink", with: "filesink sync=true") + out.path)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        #expect(try await d.get(Daemon.player, "CanSeek") == .bool(true), "CanSeek must be true for a seekable MIDI track")
        try await d.waitFor("position moves") { try await d.position() > 200_000 }
        // Relative: it lands 3 s after where it was when the seek was applied, which is between the position read
        // just before and that plus the wall time from that read until Seeked (the position cannot outrun the clock
        // at rate 1). The clock starts before the read: a loaded test process may resume a second after its reply.
        let sent = ContinuousClock.now
        let before = try await d.position()
        _ = try await d.call(Daemon.player, "Seek", [.int64(3_000_000)])
        try await d.waitFor("Seeked") { !seeked.named("Seeked").isEmpty }
        let took = Int64((ContinuousClock.now - sent) / .microseconds(1))
        let landed = seeked.named("Seeked")[0].arguments[0].int64Value ?? 0
        #expect(landed >= before + 2_900_000 && landed <= before + 3_300_000 + took,
                "Seeked(\(landed)) after Seek(+3 s) from \(before) µs, \(took) µs between")
        try await d.waitFor("played to the end", timeout: .seconds(60)) { try await d.status() == "Stopped" }
        _ = await d.terminate()
        let wav = try d.rendering(out)
        // Rendered = what reached the sink before the seek + the rest from where it landed. The first part is at
        // most the position the seek was added to (a starved machine renders behind the clock), so whatever the
        // load: the rest after the landing was all heard, and about 3 s of the 12 were skipped.
        let rest = 12.0 - Double(landed) / 1e6
        #expect(wav.seconds >= rest - 0.25 && wav.seconds <= 9.5, "rendered \(wav.seconds) s of a 12 s file after skipping 3 s (landed at \(landed) µs)")
        try #require(wav.frameCount >= 22050, "rendered only \(wav.frameCount) frames")
        let tail = wav.frames((wav.frameCount - 22050)..<wav.frameCount).samples.map { abs(Int($0)) }.max() ?? 0
        #expect(tail > 300, "notes after the seek are heard (peak \(tail) in the last half second)")
    }

    @Test func aRestoredQueueRemakesRenditionsRemovedFromTheCache() async throws {
        let d = try Daemon()
        let url = try Self.midiFolder(d).appendingPathComponent("patterns.mid")
        try Self.cases[2].file.write(to: url)
        try await d.start([url.path])
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        _ = await d.terminate()
        let cache = d.home.url.appendingPathComponent("cache/tonearm/midi")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.path).count == 1)
        try FileManager.default.removeItem(at: cache)
        let out = d.media.file("restored.wav")
        let failures = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start(sink: Self.wavSink + out.path)
        try await d.waitFor("restored, paused") { try await d.status() == "Paused" }
        let resumedAt = Double(try await d.position()) / 1e6 // where the first run stopped
        _ = try await d.call(Daemon.player, "Play")
        try await d.waitFor("played to the end", timeout: .seconds(30)) { try await d.status() == "Stopped" }
        #expect(failures.signals.isEmpty, "\(failures.signals)")
        _ = await d.terminate()
        #expect(abs(try d.rendering(out).seconds - (Self.cases[2].seconds - resumedAt)) <= 0.05, "resumed at \(resumedAt) s")
    }

    @Test func malformedFilesAreReportedAndSkipped() async throws {
        let d = try Daemon()
        let folder = try Self.midiFolder(d)
        let first = folder.appendingPathComponent("first.mid")
        // Long enough that it is still playing when the test spoils the next file, however loaded the machine; the
        // test then moves on with Next (a spoiled file reached by a gapless hand-over is PlaybackEngineTests' part).
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("First") + Ev.notes(120, ticks: 96) + Ev.end()]).write(to: first)
        let truncated = folder.appendingPathComponent("truncated.mid")
        var bytes = SMFBytes(format: 1, division: 96, tracks: [Ev.notes(4, ticks: 96) + Ev.end(), Ev.notes(4, ticks: 96) + Ev.end()]).bytes
        bytes.removeLast(10)
        try Data(bytes).write(to: truncated)
        let wav = folder.appendingPathComponent("renamed.mid")
        try WAV.sine(seconds: 0.5).write(to: wav)
        let spoiled = folder.appendingPathComponent("spoiled.mid") // good when queued, broken before it plays
        try SMFBytes(format: 0, division: 96, tracks: [Ev.notes(4, ticks: 96) + Ev.end()]).write(to: spoiled)
        let last = folder.appendingPathComponent("last.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("Last") + Ev.notes(2, ticks: 96) + Ev.end()]).write(to: last)

        let failures = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start([first.path, truncated.path, wav.path, spoiled.path, last.path])
        try await d.waitFor("two refused at once") { failures.named("TrackFailed").count >= 2 }
        let refused = failures.named("TrackFailed").map { ($0.arguments[1].stringValue ?? "", $0.arguments[3].stringValue ?? "") }
        #expect(refused.contains { $0.0 == truncated.absoluteString && $0.1.contains("runs past end of file") }, "\(refused)")
        #expect(refused.contains { $0.0 == wav.absoluteString && $0.1.contains("not a Standard MIDI File: header chunk is 'RIFF'") }, "\(refused)")
        #expect(try await d.tracks().count == 3)
        try Data([0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0, 96, 0x4D, 0x54, 0x72, 0x6B, 0, 0, 0x40, 0]).write(to: spoiled)
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "First", "the first file still plays")
        _ = try await d.call(Daemon.player, "Next")
        try await d.waitFor("the spoiled one fails while queued", timeout: .seconds(30)) { failures.named("TrackFailed").count >= 3 }
        try await d.waitFor("the last one plays", timeout: .seconds(30)) {
            try await d.metadata()["xesam:title"]?.stringValue == "Last"
        }
        try await d.waitFor("Stopped at the end", timeout: .seconds(30)) { try await d.status() == "Stopped" }
        #expect(failures.named("TrackFailed")[2].arguments[1].stringValue == spoiled.absoluteString)
        #expect(d.log.contains("truncated.mid"))
    }

    @Test func aMissingSoundFontIsAClearErrorNotSilence() async throws {
        let d = try Daemon()
        let config = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.midi]\nsoundfont = \"/nowhere/GM.sf2\"\n".write(to: config, atomically: true, encoding: .utf8)
        let url = try Self.midiFolder(d).appendingPathComponent("x.mid")
        try Self.cases[0].file.write(to: url)
        try await d.start()
        do {
            _ = try await d.call(Daemon.tonearm, "Enqueue", [.stringArray([url.absoluteString])])
            Issue.record("a MIDI file was queued with no SoundFont")
        } catch let error as DBusError {
            #expect(error.name == "org.tonearm.Error.SoundFontMissing")
            #expect(error.message.contains("/nowhere/GM.sf2"))
        }
        #expect(d.log.contains("/nowhere/GM.sf2"), "the daemon says so at start")
    }
}

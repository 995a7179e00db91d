import Foundation
import Playback
import Testing
import TestSupport

/// A tiny Standard MIDI File (format 0): four quarter notes at 120 bpm, about 2 s.
func standardMidiFile() -> [UInt8] {
    var track: [UInt8] = [0x00, 0xC0, 0x00] // piano
    for note: UInt8 in [60, 64, 67, 72] {
        track += [0x00, 0x90, note, 0x64, 0x60, 0x80, note, 0x40] // on, 96 ticks, off
    }
    track += [0x00, 0xFF, 0x2F, 0x00]
    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    return Array("MThd".utf8) + be32(6) + [0, 0, 0, 1, 0, 96] + Array("MTrk".utf8) + be32(track.count) + track
}

@Suite("Media: tags, probe, MIDI, support")
struct MediaTests {
    /// A fresh folder for each test (Swift Testing makes a suite instance per test), removed when it ends.
    let dir = TemporaryDirectory("tonearm-playback")

    @Test("tags from the stream are reported, merged, per item")
    func tags() async throws {
        let ogg = dir.file("tagged.ogg")
        try await runGst(["audiotestsrc", "num-buffers=20", "!", "audioconvert", "!",
                    "taginject", "tags=title=\"Hello\",artist=\"Someone\",album=\"AnAlbum\",track-number=(uint)3,genre=\"Test\"", "!",
                    "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(ogg.path)"])
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=false")
        let log = EventLog(engine)
        let tagged = item(ogg, 5)
        engine.load(tagged)
        #expect(await log.waitFor(.finished(tagged)))
        engine.shutdown()
        let tags = log.events.compactMap { if case .tags(tagged, let t) = $0 { return t } else { return nil } }.last
        let t = try #require(tags)
        #expect(t.title == "Hello")
        #expect(t.artists == ["Someone"])
        #expect(t.album == "AnAlbum")
        #expect(t.trackNumber == 3)
        #expect(t.genres == ["Test"])
    }

    @Test("MediaProbe reads duration and tags without playing")
    func probe() async throws {
        let ogg = dir.file("tagged.ogg")
        try await runGst(["audiotestsrc", "num-buffers=43", "samplesperbuffer=1024", "!", "audioconvert", "!",
                    "taginject", "tags=title=\"ProbeMe\",artist=\"A\",album=\"B\"", "!",
                    "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(ogg.path)"])
        let result = try MediaProbe.probe(uri: ogg.uri)
        let duration = try #require(result.duration)
        #expect(abs(duration - 998_458_049) < 30_000_000)
        #expect(result.tags.title == "ProbeMe")
        #expect(result.tags.artists == ["A"])

        let wav = dir.file("s.wav")
        try sine(0..<22_050).write(to: wav)
        #expect(try MediaProbe.probe(uri: wav.uri).duration == 500_000_000)
    }

    @Test("MediaProbe throws for missing, random and non-audio files")
    func probeErrors() async throws {
        #expect { try MediaProbe.probe(uri: dir.file("none.ogg").uri) } throws: { error in
            (error as? PlaybackError)?.domain == "resource"
        }
        let noise = dir.file("noise.ogg")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: noise)
        #expect { try MediaProbe.probe(uri: noise.uri) } throws: { error in
            (error as? PlaybackError)?.domain == "stream"
        }
        let png = dir.file("picture.png")
        try await runGst(["videotestsrc", "num-buffers=1", "!", "pngenc", "!", "filesink", "location=\(png.path)"])
        #expect(throws: PlaybackError.self) { try MediaProbe.probe(uri: png.uri) }
    }

    @Test("a Standard MIDI File plays through midiparse + fluiddec")
    func midi() async throws {
        let mid = dir.file("tune.mid"), output = dir.file("out.wav")
        try Data(standardMidiFile()).write(to: mid)
        // FluidSynth reads its 148 MB SoundFont before the first sign of progress: a loaded run read it from the disk
        // for more than the default 10 s. This test is about the MIDI path, not the preroll deadline.
        let engine = try PlaybackEngine(sinkDescription: wavSink(output), prerollTimeout: .seconds(120))
        let log = EventLog(engine)
        let tune = item(mid, 1)
        engine.load(tune)
        #expect(await log.waitFor(.finished(tune), timeout: .seconds(180)))
        engine.shutdown()
        #expect(log.events.failures.isEmpty)
        let audio = try WAV.read(output)
        #expect(audio.seconds > 1.8 && audio.seconds < 4)
        #expect(audio.mono.map { abs(Int($0)) }.max() ?? 0 > 300, "MIDI output is silent")
        let probe = try MediaProbe.probe(uri: mid.uri)
        #expect(probe.duration.map { $0 > 1_800_000_000 && $0 < 2_600_000_000 } == true)
    }

    @Test("supported MIME types and URI schemes come from the registry")
    func support() {
        let types = MediaSupport.supportedMimeTypes()
        for expected in ["audio/x-wav", "audio/x-flac", "audio/flac", "application/ogg", "audio/ogg", "audio/midi", "audio/mpeg"] {
            #expect(types.contains(expected), "missing \(expected)")
        }
        #expect(!types.contains("audio/x-raw"))
        #expect(!types.contains { $0.hasPrefix("video/x-raw") || $0.hasPrefix("image/") })
        let schemes = MediaSupport.supportedURISchemes()
        #expect(schemes.contains("file"))
        #expect(schemes.contains("http"))
    }
}

@Suite("Gapless across encoded formats")
struct GaplessEncodedTests {
    /// A fresh folder for each test (Swift Testing makes a suite instance per test), removed when it ends.
    let dir = TemporaryDirectory("tonearm-playback")

    /// Encodes `signal` with a gst-launch encoder chain ("vorbisenc ! oggmux").
    func encode(_ signal: WAV, _ chain: [String], tags: String? = nil, to url: URL) async throws {
        let wav = dir.file(url.deletingPathExtension().lastPathComponent + "-src.wav")
        try signal.write(to: wav)
        var args = ["filesrc", "location=\(wav.path)", "!", "wavparse", "!", "audioconvert", "!"]
        if let tags { args += ["taginject", "tags=\(tags)", "!"] }
        args += chain + ["!", "filesink", "location=\(url.path)"]
        try await runGst(args)
    }

    @Test("Ogg Vorbis pieces of one sine join without a gap or a jump; tags switch with the item")
    func vorbis() async throws {
        let whole = sine(0..<(40_000 + 30_000))
        let aURL = dir.file("a.ogg"), bURL = dir.file("b.ogg")
        try await encode(whole.frames(0..<40_000), ["vorbisenc", "quality=0.9", "!", "oggmux"], tags: "title=\"First\"", to: aURL)
        try await encode(whole.frames(40_000..<whole.frameCount), ["vorbisenc", "quality=0.9", "!", "oggmux"], tags: "title=\"Second\"", to: bURL)
        let output = dir.file("out.wav")
        let engine = try PlaybackEngine(sinkDescription: wavSink(output))
        let log = EventLog(engine)
        let a = item(aURL, 1), b = item(bURL, 2)
        engine.setNextItemProvider { $0 == a ? b : nil }
        engine.load(a)
        #expect(await log.waitFor(.finished(b)))
        engine.shutdown()
        #expect(log.events.started == [a, b])
        let titles = log.events.compactMap { event -> String? in
            guard case .tags(let i, let t) = event, let title = t.title else { return nil }
            return "\(i.token):\(title)"
        }
        #expect(titles.first == "1:First")
        #expect(titles.last == "2:Second")
        let rendered = try WAV.read(output).mono
        #expect(abs(rendered.count - whole.frameCount) <= 64, "length \(rendered.count) vs \(whole.frameCount)")
        // Lossy: allow 25% over the sine's steepest step; a gap or a splice jump is far larger.
        #expect(AudioCheck.largestJump(rendered) <= sineStep * 5 / 4, "a jump: the join is not seamless")
        #expect(AudioCheck.longestSilence(rendered.dropFirst(), threshold: 99) < 2, "a gap between the pieces")
    }
}

import DBus
import DaemonHarness
import Foundation
import TagFields
import TestSupport
import Testing

/// ReplayGain as heard: gains from tags (REPLAYGAIN_*, R128 in Opus) and from Tonearm's measurement, applied per
/// stream across gapless joins, read back sample by sample from a WAV.
@Suite(.serialized, .timeLimit(.minutes(4))) struct ReplayGainTests {
    static let library = "org.tonearm.Library1"
    static let rate = 48000
    /// 480 Hz at 48 kHz: a period of exactly 100 frames, so a cut at a multiple of 100 falls on a peak.
    static let frequency = 480.0
    static let peak = 0.5 * 32767

    /// A cosine of the test frequency over `frames`, continuous across adjacent ranges.
    static func cosine(_ frames: Range<Int>, peak: Double = peak) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(frames.count * 2)
        for i in frames {
            let v = Int16((peak * cos(2 * .pi * frequency * Double(i) / Double(rate))).rounded())
            out.append(v)
            out.append(v)
        }
        return out
    }

    static func encode(_ wav: URL, to out: URL, _ encoder: String) async throws {
        let r = try await runProcess("gst-launch-1.0", ["-q", "filesrc", "location=\(wav.path)", "!", "wavparse", "!", "audioconvert", "!"]
                                     + encoder.split(separator: " ").map(String.init) + ["!", "filesink", "location=\(out.path)"])
        #expect(r.status == 0, "\(r.err)")
    }

    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    /// Integrated loudness of a file as Debian's loudgain measures it (`-s s`: it writes no tags).
    static func loudgain(_ file: URL) async throws -> Double {
        let r = try await runProcess("loudgain", ["-s", "s", file.path])
        let text = r.out + "\n" + r.err
        let line = try #require(text.split(separator: "\n").first { $0.contains("Loudness:") }, "loudgain said: \(text)")
        return try #require(Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? ""))
    }

    /// In `track` mode each track plays at its own gain; with `off`, every one at the level it was made at.
    @Test(arguments: ["track", "off"])
    func threeTracksGaplesslyEachAtItsGain(_ mode: String) async throws {
        let d = try Daemon()
        let album = d.home.file("Music/Mixed")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        let cuts = [0, 96_000, 192_000, 288_000]  // 2 s each; every cut on a peak of the cosine
        // 1: FLAC tagged -6 dB. 2: WAV without tags, measured. 3: Opus with R128_TRACK_GAIN -2048 (-8 dB to -23 LUFS,
        // so -3 dB to ReplayGain's -18 LUFS).
        let one = album.appendingPathComponent("1 tagged.flac"), two = album.appendingPathComponent("2 measured.wav")
        let three = album.appendingPathComponent("3 r128.opus")
        let scratch = d.media.file("one.wav"), scratch3 = d.media.file("three.wav")
        try WAV(sampleRate: Self.rate, channels: 2, samples: Self.cosine(cuts[0]..<cuts[1])).write(to: scratch)
        try WAV(sampleRate: Self.rate, channels: 2, samples: Self.cosine(cuts[1]..<cuts[2])).write(to: two)
        try WAV(sampleRate: Self.rate, channels: 2, samples: Self.cosine(cuts[2]..<cuts[3])).write(to: scratch3)
        try await Self.encode(scratch, to: one, "flacenc")
        try await Self.encode(scratch3, to: three, "opusenc bitrate=256000 ! oggmux")
        try TagFields.write(one.path, [(key: "REPLAYGAIN_TRACK_GAIN", value: "-6.00 dB")])
        try TagFields.write(three.path, [(key: "R128_TRACK_GAIN", value: "-2048")])
        let expectedTwoGain = pow(10, (-18 - (try await Self.loudgain(two))) / 20)

        try d.writeConfig("[playback.replaygain]\nmode = \"\(mode)\"\n")
        let out = d.media.file("rendered.wav")
        try await d.start([], sink: "audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=48000,channels=2 ! wavenc ! filesink location=\(out.path)")
        var last: [DBusValue] = []
        do {
            // The worker runs at nice 19 on purpose: with every CPU kept busy it gets what the others leave.
            try await d.waitFor("the untagged WAV measured, the others read as tagged", timeout: .seconds(300)) {
                last = try await d.call(Self.library, "LoudnessStatus")
                return last.count == 5 && last[0] == .uint32(2) && last[1] == .uint32(1) && last[2] == .uint32(0)
            }
        } catch {
            Issue.record("LoudnessStatus stayed at \(last)")
            throw error
        }
        let status = try await d.tonearm("library", "loudness")
        #expect(status.out.contains("2 tagged, 1 measured, 0 waiting, 0 failed"), "\(status.out)")
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([one, two, three].map { Daemon.uri($0.path) }), .bool(true)])
        try await d.waitFor("all three played, then Stopped", timeout: .seconds(60)) {
            try await d.status() == "Stopped" && FileManager.default.fileExists(atPath: out.path)
        }
        _ = await d.terminate()

        let rendered = try d.rendering(out).mono
        let start = try #require(rendered.firstIndex { $0 != 0 })
        let heard = Array(rendered[start...])
        let source = Self.cosine(0..<cuts[3]).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        #expect(abs(heard.count - cuts[3]) < 4800, "rendered \(heard.count) frames, expected \(cuts[3])")
        let gains = mode == "off" ? [1.0, 1.0, 1.0] : [pow(10, -6.0 / 20), expectedTwoGain, pow(10, -3.0 / 20)]
        // Each segment's level, away from the joins.
        for i in 0..<3 {
            let body = heard[(cuts[i] + 4800)..<min(heard.count, cuts[i + 1] - 4800)]
            let expected = gains[i] * Self.peak / 2.0.squareRoot()
            let tolerance = i == 2 ? 0.05 : 0.01  // the Opus segment is lossy
            #expect(abs(Self.rms(body) / expected - 1) < tolerance, "segment \(i + 1): RMS \(Self.rms(body)), expected \(expected)")
        }
        // The first join, sample by sample: every frame of track 1 up to the boundary has track 1's gain, every frame
        // from the boundary on has track 2's; no frame is lost or doubled.
        for n in (cuts[1] - 300)..<(cuts[1] + 300) where abs(Int(source[n])) > 2000 {
            let g = n < cuts[1] ? gains[0] : gains[1]
            let want = Double(source[n]) * g
            #expect(abs(Double(heard[n]) - want) <= 2 + abs(want) * 0.005,
                    "frame \(n) (boundary \(cuts[1])): heard \(heard[n]), expected \(Int(want)) at gain \(g)")
        }
        #expect(AudioCheck.longestSilence(Array(heard[..<(cuts[3] - 4800)]), threshold: 0) < 3, "a run of zeros means a gap")
    }

    @Test func clippingPreventionHoldsAHotTrackWithAPositiveGain() async throws {
        let d = try Daemon()
        let hot = d.media.file("hot.flac"), scratch = d.media.file("hot.wav")
        let hotPeak = 0.9 * 32767
        try WAV(sampleRate: Self.rate, channels: 2, samples: Self.cosine(0..<96_000, peak: hotPeak)).write(to: scratch)
        try await Self.encode(scratch, to: hot, "flacenc")
        try TagFields.write(hot.path, [(key: "REPLAYGAIN_TRACK_GAIN", value: "+6.00 dB"), (key: "REPLAYGAIN_TRACK_PEAK", value: "0.900000")])
        try d.writeConfig("[playback.replaygain]\nmode = \"off\"\nclipping-prevention = true\n")
        let out = d.media.file("rendered.wav")
        try await d.start([], sink: "audioconvert ! audio/x-raw,format=S16LE,rate=48000,channels=2 ! wavenc ! filesink location=\(out.path)")
        // The mode changes live, before the track plays.
        try await d.set(Daemon.tonearm, "ReplayGainMode", .string("track"))
        #expect(try await d.get(Daemon.tonearm, "ReplayGainMode") == .string("track"))
        await #expect(throws: (any Error).self, "an unknown mode is refused") {
            try await d.set(Daemon.tonearm, "ReplayGainMode", .string("loud"))
        }
        // The command line: prints the mode, refuses a bad one before sending anything, sets a good one.
        #expect(try await d.tonearm("replaygain").out.hasPrefix("track"))
        #expect(try await d.tonearm("replaygain", "loud").status == 2)
        _ = try await d.tonearm("replaygain", "album")
        #expect(try await d.get(Daemon.tonearm, "ReplayGainMode") == .string("album"))
        _ = try await d.tonearm("replaygain", "track")
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(hot.path)]), .bool(true)])
        try await d.waitFor("played, then Stopped", timeout: .seconds(60)) {
            try await d.status() == "Stopped" && FileManager.default.fileExists(atPath: out.path)
        }
        _ = await d.terminate()

        let rendered = try d.rendering(out).mono
        let start = try #require(rendered.firstIndex { $0 != 0 })
        let heard = Array(rendered[start...])
        let source = Self.cosine(0..<96_000, peak: hotPeak).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        // +6 dB would double it and flatten its tops; the peak allows 1/0.9, which reaches full scale and no further.
        let limit = 1 / 0.9
        var checked = 0
        for n in stride(from: 0, to: min(heard.count, source.count), by: 7) where abs(Int(source[n])) > 1000 {
            let want = Double(source[n]) * limit
            #expect(abs(Double(heard[n]) - want) <= 2 + abs(want) * 0.005, "frame \(n): heard \(heard[n]), expected \(Int(want))")
            checked += 1
        }
        #expect(checked > 10_000)
        #expect(heard.map { abs(Int($0)) }.max()! > 32_000, "the gain raised it to full scale")
    }
}

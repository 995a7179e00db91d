import Foundation
import Playback
import TestSupport
import Testing

/// libebur128 on GStreamer's PCM against an independent meter: Debian's loudgain (ffmpeg decoding, its own
/// libebur128 build), on generated material.
@Suite struct LoudnessMeterTests {
    static func loudgain(_ files: [URL]) async throws -> (tracks: [Double], album: Double) {
        let r = try await runProcess("loudgain", ["-a", "-s", "s"] + files.map(\.path))
        let values = (r.out + "\n" + r.err).split(separator: "\n").filter { $0.contains("Loudness:") }.compactMap {
            Double($0.split(separator: " ").dropFirst().first.map(String.init) ?? "")
        }
        try #require(values.count == files.count + 1, "loudgain said: \(r.out) \(r.err)")
        return (Array(values.dropLast()), values.last!)
    }

    @Test func measurementAgreesWithLoudgainWithinATenthOfALU() async throws {
        let dir = TemporaryDirectory("tonearm-loudness")
        // Different signals, levels, rates and containers: a quiet 1 kHz tone (WAV 44.1 kHz), pink noise (FLAC
        // 48 kHz), a loud square wave (Ogg Vorbis 44.1 kHz) and white noise in mono (FLAC 32 kHz).
        let sources: [(String, String)] = [
            ("tone.wav", "audiotestsrc wave=sine freq=1000 volume=0.1 num-buffers=200 ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! wavenc"),
            ("pink.flac", "audiotestsrc wave=pink-noise volume=0.4 num-buffers=300 ! audio/x-raw,rate=48000,channels=2 ! audioconvert ! flacenc"),
            ("square.ogg", "audiotestsrc wave=square freq=220 volume=0.7 num-buffers=250 ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! vorbisenc quality=0.8 ! oggmux"),
            ("white.flac", "audiotestsrc wave=white-noise volume=0.2 num-buffers=150 ! audio/x-raw,rate=32000,channels=1 ! audioconvert ! flacenc"),
        ]
        var files: [URL] = []
        for (name, pipeline) in sources {
            let file = dir.file(name)
            let r = try await runProcess("gst-launch-1.0", ["-q"] + pipeline.split(separator: " ").map(String.init) + ["!", "filesink", "location=\(file.path)"])
            try #require(r.status == 0, "\(r.err)")
            files.append(file)
        }
        let ours = LoudnessMeter.measure(uris: files.map(\.absoluteString))
        let theirs = try await Self.loudgain(files)
        for (i, result) in ours.tracks.enumerated() {
            let measured = try #require(try result.get().loudness)
            #expect(abs(measured - theirs.tracks[i]) <= 0.1, "\(files[i].lastPathComponent): \(measured) LUFS, loudgain \(theirs.tracks[i])")
        }
        let album = try #require(ours.album?.loudness)
        #expect(abs(album - theirs.album) <= 0.1, "album: \(album) LUFS, loudgain \(theirs.album)")
    }

    @Test func aBrokenFileFailsAloneAndSilenceHasNoLoudness() async throws {
        let dir = TemporaryDirectory("tonearm-loudness")
        let silent = dir.file("silent.wav"), broken = dir.file("broken.flac")
        try WAV(sampleRate: 44100, channels: 2, samples: Array(repeating: 0, count: 88200)).write(to: silent)
        try Data(repeating: 0x42, count: 10_000).write(to: broken)
        let group = LoudnessMeter.measure(uris: [silent.absoluteString, broken.absoluteString])
        let quiet = try group.tracks[0].get()
        #expect(quiet.loudness == nil && quiet.peak == 0 && abs(quiet.seconds - 1) < 0.01)
        #expect(throws: PlaybackError.self) { try group.tracks[1].get() }
    }
}

import Foundation
import Playback
import TestSupport
import Testing

/// Exports through real GStreamer pipelines, checked by decoding both sides to samples.
@Suite(.serialized) struct MediaExportTests {
    /// Sources made by gst-launch: (file name, encoder chain after the tagged test tone).
    static let sources: [(String, String)] = [
        ("tone.wav", "wavenc"),
        ("tone.aiff", "audioconvert ! audio/x-raw,format=S16BE ! aiffmux"),
        ("tone.flac", "flacenc"),
        ("tone.ogg", "vorbisenc ! oggmux"),
        ("tone.mp3", "lamemp3enc ! id3v2mux"),
        ("tone.m4a", "voaacenc ! mp4mux"),
        ("tone.opus", "audioresample ! audio/x-raw,rate=48000 ! opusenc ! oggmux"),
    ]

    static func make(_ name: String, _ chain: String, in dir: TemporaryDirectory) async throws -> URL {
        let url = dir.file(name)
        let tags = #"tags="title=\"Export me\",artist=\"The Testers\",album=\"Round Trip\"""#
        let arguments = ["-q", "audiotestsrc", "num-buffers=40", "freq=523", "!", "audio/x-raw,rate=44100,channels=2", "!",
                         "audioconvert", "!", "taginject", tags, "!"]
            + chain.split(separator: " ").map(String.init) + ["!", "filesink", "location=\(url.path)"]
        let (_, err, status) = try await runProcess("/usr/bin/gst-launch-1.0", arguments)
        try #require(status == 0, "gst-launch failed: \(err)")
        return url
    }

    /// Decoded samples, S16LE stereo 44.1 kHz.
    static func decode(_ url: URL, in dir: TemporaryDirectory) async throws -> Data {
        try await decodedPCM(url, through: dir.file(url.lastPathComponent + ".raw"))
    }

    static func export(_ source: URL, to destination: URL, _ mode: MediaExport.Mode) async throws {
        try await Task.detached {
            try MediaExport.run(source: source.path, destination: destination.path, mode: mode, cancellation: .init()) { _ in }
        }.value
    }

    @Test(arguments: 0..<sources.count)
    func passthroughKeepsTheSamplesAndTags(_ index: Int) async throws {
        let dir = TemporaryDirectory("tonearm-export")
        let (name, chain) = Self.sources[index]
        let source = try await Self.make(name, chain, in: dir)
        let out = dir.file("out." + source.pathExtension)
        try await Self.export(source, to: out, .passthrough)
        let original = try await Self.decode(source, in: dir)
        let copy = try await Self.decode(out, in: dir)
        #expect(original.count > 10_000)
        #expect(original == copy, "\(name): \(original.count) vs \(copy.count) bytes of samples")
        // aiffmux writes no tags, so an AIFF has none to carry over.
        if name != "tone.aiff" {
            let tags = try MediaProbe.probe(uri: out.absoluteString, timeout: .seconds(30)).tags
            #expect(tags.title == "Export me" && tags.artists == ["The Testers"] && tags.album == "Round Trip", "\(name): \(tags)")
        }
    }

    @Test(arguments: MediaExport.Format.allCases)
    func transcodesPlayAndKeepTags(_ format: MediaExport.Format) async throws {
        let dir = TemporaryDirectory("tonearm-export")
        let source = try await Self.make("tone.flac", "flacenc", in: dir)
        let out = dir.file("out." + format.rawValue)
        try await Self.export(source, to: out, .transcode(format))
        let (duration, tags) = try MediaProbe.probe(uri: out.absoluteString, timeout: .seconds(30))
        #expect(duration.map { abs(Double($0) / 1e9 - 40 * 1024 / 44100) < 0.1 } == true, "\(format): \(String(describing: duration))")
        #expect(tags.title == "Export me", "\(format)")
        #expect(tags.album == "Round Trip", "\(format)")
        #expect(try await Self.decode(out, in: dir).count > 10_000)
    }

    @Test(arguments: [("audio/mpeg, mpegversion=(int)1, layer=(int)3", "mp3"), ("audio/mpeg, mpegversion=(int)4", "m4a"),
                      ("audio/x-alac", "m4a"), ("audio/x-vorbis", "ogg"), ("audio/x-opus", "opus"), ("audio/x-flac", "flac"),
                      ("audio/x-raw, format=(string)S16LE", "wav"), ("audio/x-raw, format=(string)S24BE", "aiff")])
    func passthroughPicksTheContainerThatFits(_ caps: String, _ ext: String) throws {
        #expect(try MediaExport.passthroughPlan(caps: caps).fileExtension == ext)
    }

    @Test func notAudioIsAClearError() async throws {
        let dir = TemporaryDirectory("tonearm-export")
        let text = dir.file("notes.txt")
        try Data(repeating: 0x41, count: 5000).write(to: text)
        await #expect(throws: PlaybackError.self) { try await Self.export(text, to: dir.file("out.wav"), .passthrough) }
        await #expect(throws: PlaybackError.self) { try await Self.export(text, to: dir.file("out.ogg"), .transcode(.ogg)) }
    }
}

import Foundation
import TagFields
import TestSupport
import Testing
import TonearmCore
@testable import LocalLibrary

/// ReplayGain into the index: gains read from tags at scan time, measured for files without them, never written
/// into the files unless asked.
@Suite struct LoudnessIndexTests {
    @Test func tagsAreIndexedAndUntaggedFilesMeasured() async throws {
        let fixture = Fixture()
        let library = try fixture.open()
        let album = fixture.url("Album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        let tagged = album.appendingPathComponent("1.flac"), opus = album.appendingPathComponent("2.opus")
        let plain = album.appendingPathComponent("3.wav")
        try FileManager.default.copyItem(at: try await Media.shared.file(.flac, tags: [("title", "Tagged")]), to: tagged)
        try WAV.sine(seconds: 1.5).write(to: plain)
        let encoded = try await runProcess("gst-launch-1.0", ["-q", "filesrc", "location=\(plain.path)", "!", "wavparse", "!", "audioconvert", "!", "audioresample", "!",
                                                              "opusenc", "!", "oggmux", "!", "filesink", "location=\(opus.path)"])
        #expect(encoded.status == 0, "\(encoded.err)")
        try TagFields.write(tagged.path, [(key: "REPLAYGAIN_TRACK_GAIN", value: "-6.50 dB"), (key: "REPLAYGAIN_TRACK_PEAK", value: "0.5"),
                                          (key: "REPLAYGAIN_ALBUM_GAIN", value: "+1.25 dB")])
        try TagFields.write(opus.path, [(key: "R128_TRACK_GAIN", value: "-2048"), (key: "R128_ALBUM_GAIN", value: "256")])
        let before = try Data(contentsOf: plain)
        _ = try await library.scan()

        let flac = try #require(try await library.track(at: tagged)?.loudness)
        #expect(flac == TrackLoudness(trackGain: -6.5, trackPeak: 0.5, albumGain: 1.25, albumPeak: nil, source: .tags))
        let r128 = try #require(try await library.track(at: opus)?.loudness)
        #expect(r128.trackGain == -3 && r128.albumGain == 6, "R128 gains move from -23 to -18 LUFS: +5 dB")
        #expect(try await library.track(at: plain)?.loudness == nil)
        #expect(try await library.loudnessStatus() == LoudnessStatus(tagged: 2, measured: 0, pending: 1, failed: 0, running: false))

        let measured = try library.measurePending(using: GStreamerMedia())
        #expect(measured == 1)
        let wav = try #require(try await library.track(at: plain)?.loudness)
        #expect(wav.source == .measured)
        // A 0.5-amplitude sine in both channels: about -6.7 LUFS, so about -11.3 dB to reach -18 LUFS.
        #expect(abs((wav.trackGain ?? 0) + 11.3) < 0.2, "\(wav)")
        #expect(abs((wav.trackPeak ?? 0) - 0.5) < 0.01)
        #expect(try await library.loudnessStatus().pending == 0)
        #expect(try Data(contentsOf: plain) == before, "the measurement stays in the index")

        // Asked for: the measured gains go into the file, and the next scan reads them as tags.
        let report = try await library.writeLoudnessTags()
        #expect(report.written == 1 && report.failures.isEmpty)
        let fields = try TagFields.read(plain.path)
        #expect(fields["REPLAYGAIN_TRACK_GAIN"]?.first?.hasSuffix(" dB") == true)
        _ = try await library.scan()
        #expect(try await library.loudnessStatus().tagged == 3)
    }
}

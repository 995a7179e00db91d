import Foundation
@testable import Playback
import Testing
import TestSupport

/// What the cheap check before playback lets through.
@Suite struct MediaPrecheckTests {
    @Test(arguments: [
        ("audio/mpeg", true), ("audio/x-wav", true), ("audio/midi", true), ("application/ogg", true), ("application/x-id3", true),
        ("video/quicktime", true), ("video/x-matroska", true), ("video/x-raw", false), ("image/png", false), ("text/plain", false),
        ("application/x-subtitle-lrc", false), ("application/zip", false), ("application/pdf", false), ("application/xml", false),
    ])
    func onlyContainersThatMayHoldAudioPass(_ type: String, _ passes: Bool) {
        #expect(MediaPrecheck.mayHoldAudio(type) == passes)
    }

    @Test(arguments: [("video/x-h263", 50, false), ("video/mpeg", 40, false), ("video/quicktime", 100, true), ("video/mpeg", 80, true)])
    func videoCountsOnlyWhenTypefindIsSure(_ type: String, _ probability: Int, _ passes: Bool) {
        #expect(MediaPrecheck.mayHoldAudio(type, probability: UInt32(probability)) == passes)
    }

    /// Noise gets a type from typefind now and then (in 3,000 tries: application/x-subtitle-lrc, video/x-h263 and
    /// video/mpeg, 11 times in all): refused all the same. Rarer still it looks like audio that typefind finds likely
    /// (in 150,000 files of 40 kB: audio/x-mod 3 times, audio/mpeg once), which passes here as a real file with a few
    /// MP3 frames must, and fails when it is played. So the same 100 files on every run (a seeded generator): whether
    /// a fresh draw hits one of those is chance, and a test must not be.
    @Test func noiseIsRefused() throws {
        let dir = TemporaryDirectory("tonearm-precheck")
        var generator = SeededGenerator(seed: 0x7079_7065)
        for i in 0..<100 {
            let url = dir.file("noise\(i).ogg")
            var bytes = Data(capacity: 40_000)
            for _ in 0..<5_000 { withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) } }
            try bytes.write(to: url)
            #expect(MediaPrecheck.check(url.absoluteString, typefind: true) != nil, "noise \(i) passed")
        }
    }
}

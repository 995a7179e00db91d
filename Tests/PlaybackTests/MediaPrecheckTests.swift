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
    /// video/mpeg, 11 times in all): refused all the same.
    @Test func noiseIsRefused() throws {
        let dir = TemporaryDirectory("tonearm-precheck")
        var generator = SystemRandomNumberGenerator()
        for i in 0..<100 {
            let url = dir.file("noise\(i).ogg")
            try Data((0..<40_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
            #expect(MediaPrecheck.check(url.absoluteString, typefind: true) != nil, "noise \(i) passed")
        }
    }
}

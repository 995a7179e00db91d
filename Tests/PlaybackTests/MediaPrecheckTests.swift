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

    /// Noise gets a type from typefind now and then ("application/x-subtitle-lrc" in 3 of 200 tries): refused all the same.
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

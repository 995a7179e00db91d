import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// Tags and cover art reach MPRIS Metadata.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MetadataTests {
    /// A valid 1×1 PNG.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]

    /// An ID3v2.3 tag with text frames and an attached picture.
    static func id3(_ text: [(String, String)], picture: [UInt8]) -> [UInt8] {
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            let n = UInt32(body.count)
            return Array(id.utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), 0, 0] + body
        }
        var frames: [UInt8] = []
        for (id, value) in text { frames += frame(id, [0] + Array(value.utf8)) }
        frames += frame("APIC", [0] + Array("image/png".utf8) + [0, 3, 0] + picture)
        let size = frames.count
        let syncsafe: [UInt8] = [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
        return Array("ID3".utf8) + [3, 0, 0] + syncsafe + frames
    }

    @Test func tagsAndCoverArtInMetadata() async throws {
        let d = try Daemon()
        let raw = d.media.file("raw.mp3")
        let encode = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=1500", "!", "audioconvert", "!", "lamemp3enc", "!", "filesink", "location=\(raw.path)"])
        try #require(encode.status == 0, "gst-launch could not make an MP3")
        let tagged = d.media.file("tagged.mp3")
        let tag = Self.id3([("TIT2", "Blue in Green"), ("TPE1", "Bill Evans"), ("TALB", "Kind of Blue"), ("TRCK", "3"), ("TCON", "Jazz")], picture: Self.png)
        try Data(tag + [UInt8](try Data(contentsOf: raw))).write(to: tagged)
        let plain = try d.sine("plain.wav", seconds: 3)

        // 35 s: it is still the current track while the checks below run, however loaded the machine.
        try await d.start([tagged.path, plain])
        try await d.waitFor("tags read") { (try await d.metadata())["xesam:title"]?.stringValue == "Blue in Green" }
        try await d.waitFor("art") { (try await d.metadata())["mpris:artUrl"] != nil }
        try await d.waitFor("length") { ((try await d.metadata())["mpris:length"]?.int64Value ?? 0) > 4_000_000 }
        let m = try await d.metadata()
        #expect(m["xesam:artist"] == .stringArray(["Bill Evans"]))
        #expect(m["xesam:album"]?.stringValue == "Kind of Blue")
        #expect(m["xesam:trackNumber"]?.int64Value == 3)
        #expect(m["xesam:genre"] == .stringArray(["Jazz"]))
        #expect(m["xesam:url"]?.stringValue == Daemon.uri(tagged.path))
        #expect((m["mpris:length"]?.int64Value ?? 0) > 4_000_000)
        let art = try #require(URL(string: m["mpris:artUrl"]?.stringValue ?? ""))
        #expect(art.isFileURL)
        #expect(art.path.hasPrefix(d.home.file("cache/tonearm/art").path))
        #expect([UInt8](try Data(contentsOf: art)) == Self.png)

        _ = try await d.call(Daemon.player, "Next")
        try await d.waitFor("plain") { (try await d.metadata())["xesam:title"]?.stringValue == "plain" }
        #expect((try await d.metadata())["mpris:artUrl"] == nil, "a track without art has no artUrl")
        #expect((try await d.metadata())["mpris:length"]?.int64Value == 3_000_000)
    }
}

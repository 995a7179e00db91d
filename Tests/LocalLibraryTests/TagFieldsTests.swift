import Foundation
import Glibc
import TagFields
import TestSupport
import Testing

/// TagLib's property map through the C++ bridge: the fields Debian's C binding cannot reach.
@Suite struct TagFieldsTests {
    @Test(arguments: [Media.Format.flac, .ogg, .mp3, .m4a])
    func writtenFieldsReadBack(_ format: Media.Format) async throws {
        let source = try await Media.shared.file(format, tags: [("title", "Fields")])
        let folder = TemporaryDirectory("tonearm-tagfields")
        let copy = folder.file("copy.\(format.rawValue)")
        try FileManager.default.copyItem(at: source, to: copy)

        try TagFields.write(copy.path, [
            (key: "REPLAYGAIN_TRACK_GAIN", value: "-6.00 dB"),
            (key: "REPLAYGAIN_TRACK_PEAK", value: "0.891251"),
            (key: "LYRICS", value: "first line\nsecond line"),
        ])
        let fields = try TagFields.read(copy.path)
        // TagLib 1.13 reads no items from the ilst gst's mp4mux writes; it keeps its own.
        if format != .m4a { #expect(fields["TITLE"] == ["Fields"]) }
        #expect(fields["REPLAYGAIN_TRACK_GAIN"] == ["-6.00 dB"])
        #expect(fields["REPLAYGAIN_TRACK_PEAK"] == ["0.891251"])
        #expect(fields["LYRICS"] == ["first line\nsecond line"])

        try TagFields.write(copy.path, [(key: "REPLAYGAIN_TRACK_GAIN", value: "")])
        #expect(try TagFields.read(copy.path)["REPLAYGAIN_TRACK_GAIN"] == nil)
    }

    @Test func aFileThatIsNotAudioIsUnreadable() throws {
        let folder = TemporaryDirectory("tonearm-tagfields")
        let path = folder.file("noise.flac").path
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: TagFields.Failure.unreadable(path)) { try TagFields.read(path) }
        #expect(throws: TagFields.Failure.unreadable("/nonexistent/x.mp3")) { try TagFields.syncedLyrics("/nonexistent/x.mp3") }
    }

    // One inotify instance at a time: they are the user's (128 in all), shared with every daemon the tests run.
    @Test(.serialized, arguments: [Media.Format.flac, .ogg, .mp3, .m4a])
    func readingOpensTheFileReadOnly(_ format: Media.Format) async throws {
        // Opened for writing, a file read for its tags would tell every inotify watcher (another player's library,
        // a sync tool) that it was written, each time it is scanned.
        let file = try await Media.shared.file(format, tags: [("title", "Watched")])
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(watch >= 0)
        defer { close(watch) }
        try #require(inotify_add_watch(watch, file.path, UInt32(IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) >= 0)

        let read = try #require(TagFields.readFile(file.path))
        #expect(read.sampleRate > 0 && read.lengthSeconds > 0)
        if format != .m4a { #expect(read.title == "Watched") }
        _ = try TagFields.read(file.path)
        if format == .mp3 { _ = try TagFields.syncedLyrics(file.path) }

        // Events are queued when the file is closed: all there by now.
        var masks: [UInt32] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(watch, &buffer, buffer.count)
            guard count > 0 else { break }
            var at = 0
            while at < count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self) }
                let nameLength = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self) }
                masks.append(mask)
                at += 16 + Int(nameLength)
            }
        }
        #expect(masks.contains { $0 & UInt32(IN_CLOSE_NOWRITE) != 0 }, "the file was read")
        #expect(!masks.contains { $0 & UInt32(IN_CLOSE_WRITE) != 0 }, "the file was opened for writing: \(masks)")
    }

    /// SYLT in an ID3v2 tag at the front of an MPEG stream, or in a WAV's or an AIFF's `id3 ` chunk; a file that can
    /// hold neither (a FLAC, an Ogg, noise) has none, whatever its name.
    @Test(arguments: ["synced.mp3", "synced.wav", "synced.aiff", "noise.mp3", "tagged.flac"])
    func synchronisedLyricsAreReadFromAnID3v2TagWhereverItCanBe(_ name: String) async throws {
        let folder = TemporaryDirectory("tonearm-tagfields")
        let file = folder.file(name)
        let tag = Self.id3v2(sylt: [(250, "Early"), (1500, "Later")])
        let silence = [UInt8](repeating: 0, count: 8820)
        switch name {
        case "synced.mp3": try Data(tag + [UInt8](try Data(contentsOf: try await Media.shared.file(.mp3, tags: [])))).write(to: file)
        case "synced.wav":
            let fmt = Array("fmt ".utf8) + le32(16) + [1, 0, 1, 0] + le32(44100) + le32(88200) + [2, 0, 16, 0]
            let chunks = fmt + Array("data".utf8) + le32(UInt32(silence.count)) + silence + Array("id3 ".utf8) + le32(UInt32(tag.count)) + tag
            try Data(Array("RIFF".utf8) + le32(UInt32(4 + chunks.count)) + Array("WAVE".utf8) + chunks).write(to: file)
        case "synced.aiff":
            // COMM: 1 channel, 4410 frames, 16 bits, 44100 Hz as an 80-bit float.
            let comm = Array("COMM".utf8) + be32(18) + [0, 1] + be32(4410) + [0, 16, 0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0]
            let ssnd = Array("SSND".utf8) + be32(UInt32(8 + silence.count)) + be32(0) + be32(0) + silence
            let chunks = comm + ssnd + Array("ID3 ".utf8) + be32(UInt32(tag.count)) + tag
            try Data(Array("FORM".utf8) + be32(UInt32(4 + chunks.count)) + Array("AIFF".utf8) + chunks).write(to: file)
        case "noise.mp3": try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: file)
        default: try FileManager.default.copyItem(at: try await Media.shared.file(.flac, tags: [("title", "Plain")]), to: file)
        }
        let lines = try TagFields.syncedLyrics(file.path).map { "\($0.milliseconds) \($0.text)" }
        #expect(lines == (name.hasPrefix("synced") ? ["250 Early", "1500 Later"] : []), "\(name)")
    }

    /// An ID3v2.3 tag holding one SYLT frame (Latin-1, milliseconds).
    static func id3v2(sylt lines: [(UInt32, String)]) -> [UInt8] {
        var sylt: [UInt8] = [0x00] + Array("eng".utf8) + [0x02, 0x01, 0x00]
        for (ms, text) in lines { sylt += Array(text.utf8) + [0x00] + be32(ms) }
        let frame = Array("SYLT".utf8) + be32(UInt32(sylt.count)) + [0, 0] + sylt
        let size = frame.count
        return Array("ID3".utf8) + [3, 0, 0] + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)] + frame
    }

    @Test func anMP3WithoutSynchronisedLyricsHasNone() async throws {
        let file = try await Media.shared.file(.mp3, tags: [("title", "Plain")])
        #expect(try TagFields.syncedLyrics(file.path).isEmpty)
    }
}

private func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
private func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }

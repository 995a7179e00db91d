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

    @Test func anMP3WithoutSynchronisedLyricsHasNone() async throws {
        let file = try await Media.shared.file(.mp3, tags: [("title", "Plain")])
        #expect(try TagFields.syncedLyrics(file.path).isEmpty)
    }
}

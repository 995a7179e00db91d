import Foundation
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

    @Test func anMP3WithoutSynchronisedLyricsHasNone() async throws {
        let file = try await Media.shared.file(.mp3, tags: [("title", "Plain")])
        #expect(try TagFields.syncedLyrics(file.path).isEmpty)
    }
}

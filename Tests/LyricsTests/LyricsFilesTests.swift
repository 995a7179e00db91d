import Foundation
import Lyrics
import LyricsFiles
import RawPaths
import TagFields
import TestSupport
import Testing

/// Lyrics found beside and inside real files on disk, under names that are not UTF-8 too.
@Suite struct LyricsFilesTests {
    static let e9: UInt8 = 0xE9 // "é" in Latin-1: not UTF-8 on its own

    static let uris: [(String, [UInt8]?)] = [
        ("file:///tmp/caf%E9.mp3", Array("/tmp/caf".utf8) + [e9] + Array(".mp3".utf8)),
        ("file://localhost/a%20b/c%2Fd", Array("/a b/c/d".utf8)),
        ("FILE:///Upper", Array("/Upper".utf8)),
        ("file:/one/slash", Array("/one/slash".utf8)),
        ("file:///caf%c3%a9?query#fragment", Array("/café".utf8)),
        ("file:///bad%zzescape%4", Array("/bad%zzescape%4".utf8)),
        ("file:///nul%00byte", nil),
        ("http://host/x.mp3", nil),
    ]

    @Test(arguments: uris) func fileURIsGiveTheirPathsBytes(_ uri: String, _ bytes: [UInt8]?) throws {
        let url = try #require(URL(string: uri))
        #expect(RawPath(fileURL: url)?.bytes == bytes, "\(uri)")
    }

    @Test func componentsOfAPath() {
        let path = RawPath(bytes: Array("/music/caf".utf8) + [Self.e9] + Array(".live.flac".utf8))
        #expect(path.lastComponent == Array("caf".utf8) + [Self.e9] + Array(".live.flac".utf8))
        #expect(path.baseName == Array("caf".utf8) + [Self.e9] + Array(".live".utf8))
        #expect(path.stem == "caf\u{FFFD}.live")
        #expect(path.parent == RawPath("/music"))
        #expect(RawPath("/top").parent == RawPath("/"))
        #expect(RawPath("/music/.hidden").baseName == Array(".hidden".utf8))
        #expect(RawPath("/music/noext").baseName == Array("noext".utf8))
        #expect(RawPath("/").appending(Array("x".utf8)) == RawPath("/x"))
    }

    static let absolutes: [(String, String, [UInt8])] = [
        ("song.wav", "/music", Array("/music/song.wav".utf8)),
        ("/abs//a/./b/../c.wav", "/ignored", Array("/abs/a/c.wav".utf8)),
        ("../../../up.wav", "/music/x", Array("/up.wav".utf8)),
        ("./caf\u{E9}.wav", "/m/", Array("/m/caf\u{E9}.wav".utf8)),
    ]

    /// Command-line paths made absolute in bytes, as `tonearm play` and tonearmd's own arguments do.
    @Test(arguments: absolutes) func pathsAreMadeAbsoluteLexically(_ path: String, _ base: String, _ expected: [UInt8]) {
        #expect(RawPath.absolute(Array(path.utf8), relativeTo: Array(base.utf8)) == expected)
        // A byte that is not UTF-8 is kept as it is.
        #expect(RawPath.absolute([Self.e9], relativeTo: Array(base.utf8)).last == Self.e9)
    }

    /// Writes `bytes` to `name` (any bytes) in `folder`.
    static func write(_ bytes: [UInt8], _ folder: URL, _ name: [UInt8]) throws -> RawPath {
        RawPath(bytes: try writeRaw(bytes, folder: folder, name: name))
    }

    /// Removes what the test made under names Foundation cannot name.
    static func remove(_ paths: [RawPath]) {
        for path in paths { _ = path.withCString { unlink($0) } }
    }

    @Test func aSidecarBesideANameThatIsNotUTF8IsFoundInAnyCase() throws {
        let folder = TemporaryDirectory("tonearm-lyrics")
        let name = Array("caf".utf8) + [Self.e9]
        let song = try Self.write([UInt8](WAV.sine(seconds: 0.2, sampleRate: 8000).data()), folder.url, name + Array(".wav".utf8))
        // Upper case but for the byte that is no letter in ASCII: matched as the same name without case.
        let upper = Array("CAF".utf8) + [Self.e9]
        let lrc = try Self.write(Array("[00:01.00]Un\n[00:02.50]Deux\n".utf8), folder.url, upper + Array(".LRC".utf8))
        defer { Self.remove([song, lrc]) }
        #expect(LyricsFiles.sidecar(of: song) == lrc)
        let lyrics = try #require(LyricsFiles.find(song))
        #expect(lyrics.source == .lrc)
        #expect(lyrics.lines.map(\.text) == ["Un", "Deux"])
        #expect(lyrics.lines.map(\.start) == [1_000_000, 2_500_000])
        // The exact name wins over one differing in case.
        let exact = try Self.write(Array("[00:00.50]Exact\n".utf8), folder.url, name + Array(".lrc".utf8))
        defer { Self.remove([exact]) }
        #expect(LyricsFiles.find(song)?.lines.map(\.text) == ["Exact"])
    }

    @Test func aTagInAFileNamedInLatin1IsRead() async throws {
        let folder = TemporaryDirectory("tonearm-lyrics")
        let made = folder.file("made.flac")
        let encoded = try await runProcess("/usr/bin/gst-launch-1.0", ["-q", "audiotestsrc", "num-buffers=10", "!", "audio/x-raw,rate=44100,channels=1",
                                                                      "!", "flacenc", "!", "filesink", "location=\(made.path)"])
        try #require(encoded.status == 0, "flacenc: \(encoded.err)")
        try TagFields.write(made.path, [("LYRICS", "[00:01.00]Tag one\n[00:02.00]Tag two")])
        let song = RawPath(folder.url.path).appending([Self.e9] + Array("t".utf8) + [Self.e9] + Array(".flac".utf8))
        let renamed = RawPath(made.path).withCString { from in song.withCString { rename(from, $0) } }
        try #require(renamed == 0)
        defer { Self.remove([song]) }
        // What the daemon had before: the path as Foundation gives it names no file.
        #expect(URL(string: "file://\(folder.url.path)/%E9t%E9.flac")?.path.isEmpty == true)
        let uri = try #require(URL(string: "file://\(folder.url.path)/%E9t%E9.flac"))
        let fromURI = try #require(RawPath(fileURL: uri))
        #expect(fromURI == song)
        let lyrics = try #require(LyricsFiles.find(fromURI))
        #expect(lyrics.source == .tag)
        #expect(lyrics.lines.map(\.text) == ["Tag one", "Tag two"])
        #expect(LyricsFiles.find(RawPath(folder.url.path).appending(Array("missing.flac".utf8))) == nil)
    }
}

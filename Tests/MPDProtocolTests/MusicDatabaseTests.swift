import TonearmCore
import Foundation
import MPDProtocol
import Testing

@Suite struct MusicDatabaseTests {
    func track(_ path: String, title: String = "t") -> LibraryTrack {
        LibraryTrack(path: path, uri: URL(fileURLWithPath: path).absoluteString, title: title, artist: "A", album: "B", albumArtist: "A",
                        genre: nil, year: 2001, trackNumber: 3, discNumber: nil, duration: 61.5, hasCover: false, artUrl: nil)
    }

    @Test func oneFolderIsTheRoot() {
        let db = MusicDatabase(folders: [URL(fileURLWithPath: "/m")], tracks: [track("/m/x/y/1.mp3"), track("/m/2.mp3"), track("/elsewhere/3.mp3")])
        #expect(db.songs.map(\.file) == ["2.mp3", "x/y/1.mp3"])
        #expect(db.directories == ["x", "x/y"])
        #expect(db.children(of: "").directories == ["x"])
        #expect(db.children(of: "").songs.map(\.file) == ["2.mp3"])
        #expect(db.children(of: "x").directories == ["x/y"])
        #expect(db.songs(under: "x").map(\.file) == ["x/y/1.mp3"])
        #expect(db.file(forURI: "file:///m/x/y/1.mp3") == "x/y/1.mp3")
        #expect(db.file(forURI: "file:///other/1.mp3") == nil)
        #expect(db.song(file: "2.mp3")?.lines() == "file: 2.mp3\nArtist: A\nAlbumArtist: A\nTitle: t\nAlbum: B\nTrack: 3\nDate: 2001\nTime: 62\nduration: 61.500\n")
    }

    /// `duration:` is mpd's "%.3f" of the seconds, made without `String(format:)`: the same text, but for a value
    /// within a rounding error of a half millisecond, and a tag value's newline is a space, as mpd writes it.
    @Test func songLinesAreMPDs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let seconds = Double(Int.random(in: 0..<100_000_000, using: &generator)) / 1e6 * Double.random(in: 0.5...40)
            let ours = MPDSong(file: "f", uri: "u", duration: seconds).lines()
            let printf = String(format: "%.3f", seconds)
            let millis = seconds * 1000
            if abs(millis - millis.rounded(.down) - 0.5) > 1e-6 {
                #expect(ours.hasSuffix("duration: \(printf)\n"), "\(seconds) s")
            }
        }
        for (seconds, text) in [(0.0, "0.000"), (0.0625, "0.062"), (61.5, "61.500"), (1.9996, "2.000"), (12.345, "12.345"), (3599.0009, "3599.001")] {
            #expect(MPDSong(file: "f", uri: "u", duration: seconds).lines().hasSuffix("duration: \(text)\n"), "\(seconds) s")
        }
        #expect(MPDSong(file: "f", uri: "u", tags: [("Comment", "one\ntwo")]).lines() == "file: f\nComment: one two\n")
    }

    /// `status`'s figures (`elapsed:`, `duration:`, `mixrampdb:`) as printf writes them, negative ones included,
    /// except at exact ties (which printf rounds by the binary value, and this to even).
    @Test func decimalsAreWrittenAsPrintfDoes() {
        var generator = SystemRandomNumberGenerator()
        for places in [0, 3, 6] {
            for _ in 0..<5_000 {
                let value = Double(Int.random(in: -100_000_000..<100_000_000, using: &generator)) / 1e6 * Double.random(in: 0.5...40)
                var scaled = abs(value)
                for _ in 0..<places { scaled *= 10 }
                guard abs(scaled - scaled.rounded(.down) - 0.5) > 1e-6 else { continue }
                #expect(Reply.decimal(value, places: places) == String(format: "%.\(places)f", value), "\(value), \(places) places")
            }
        }
        #expect(Reply.decimal(-50, places: 6) == "-50.000000")
        #expect(Reply.decimal(-0.0000001, places: 3) == String(format: "%.3f", -0.0000001))
        #expect(Reply.decimal(.infinity, places: 3) == "inf")
    }

    /// The lines `status` writes without making strings read as the string forms do.
    @Test func numberLinesMatchTheirStringForms() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let value = Double(Int.random(in: -100_000_000..<100_000_000, using: &generator)) / 1e6 * Double.random(in: 0.5...40)
            for places in [0, 3, 6] {
                var reply = Reply()
                reply.decimalLine("x", value, places: places)
                #expect(String(decoding: reply.bytes, as: UTF8.self) == "x: \(Reply.decimal(value, places: places))\n")
            }
        }
        for value in [0, 1, 9, 10, 99, 100, -1, -10, 4_294_967_295, Int.max, Int.min] {
            var reply = Reply()
            reply.line("n", value)
            #expect(String(decoding: reply.bytes, as: UTF8.self) == "n: \(value)\n")
        }
        for value in [Double.nan, -.infinity, 0.0005, -0.0] {
            var reply = Reply()
            reply.decimalLine("x", value, places: 3)
            #expect(String(decoding: reply.bytes, as: UTF8.self) == "x: \(Reply.decimal(value, places: 3))\n")
        }
        var time = Reply()
        time.time(elapsed: 61.5, duration: 180.4)
        #expect(String(decoding: time.bytes, as: UTF8.self) == "time: 62:180\n")
    }

    @Test func severalFoldersAreTopLevelFolders() {
        let db = MusicDatabase(folders: [URL(fileURLWithPath: "/a/Music"), URL(fileURLWithPath: "/b/Music")],
                               tracks: [track("/a/Music/1.mp3"), track("/b/Music/2.mp3")])
        #expect(db.songs.map(\.file) == ["Music/1.mp3", "Music_/2.mp3"])
        #expect(db.children(of: "").directories == ["Music", "Music_"])
    }

    @Test(arguments: [("/a//b/", "a/b"), ("", ""), ("/", ""), ("x", "x")])
    func normalizes(path: String, expected: String) {
        #expect(MusicDatabase.normalize(path) == expected)
    }
}

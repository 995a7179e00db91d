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

import Foundation
import Streams
import Testing

/// The playlists found in the music folders: walked once, reused for a while, never stale about what is gone.
struct SavedPlaylistsTests {
    @Test func aWalkOfTheMusicFoldersIsReusedForAWhile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-saved-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let music = root.appendingPathComponent("Music"), deep = music.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try "#EXTM3U\n".write(to: deep.appendingPathComponent("one.m3u"), atomically: true, encoding: .utf8)
        let folder = root.appendingPathComponent("playlists")
        let reusing = SavedPlaylists(folder: folder, musicFolders: [music], musicScanLifetime: .seconds(3600))
        let walking = SavedPlaylists(folder: folder, musicFolders: [music], musicScanLifetime: .zero)
        #expect(reusing.list().map(\.name) == ["one"] && walking.list().map(\.name) == ["one"])

        try "#EXTM3U\n".write(to: deep.appendingPathComponent("two.m3u"), atomically: true, encoding: .utf8)
        #expect(reusing.list().map(\.name) == ["one"], "the last walk is reused")
        #expect(walking.list().map(\.name) == ["one", "two"])

        // Saved playlists are listed as they are, and a found file that is gone drops out at once.
        try reusing.save("mine", entries: [])
        try FileManager.default.removeItem(at: deep.appendingPathComponent("one.m3u"))
        #expect(reusing.list().map(\.name) == ["mine"])
    }
}

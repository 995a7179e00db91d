import Foundation
import TonearmCore

/// The library as mpd's database: songs named by their path inside the music folder, and the folder tree
/// (`lsinfo`, `listall`). With several music folders each is a top-level folder named after its last component.
public struct MusicDatabase: Sendable {
    /// Songs sorted by `file`.
    public let songs: [MPDSong]
    /// Every folder (relative, no trailing slash), the root excluded.
    public let directories: Set<String>
    let roots: [(prefix: String, folder: String)]
    private let byFile: [String: Int]
    private let byURI: [String: Int]

    public init(folders: [URL], tracks: [LibraryTrack]) {
        let paths = folders.map { $0.standardizedFileURL.path }
        if paths.count == 1 {
            roots = [("", paths[0])]
        } else {
            var used: Set<String> = []
            roots = paths.map { path in
                var name = String(path.split(separator: "/").last ?? "music")
                while !used.insert(name).inserted { name += "_" }
                return (name + "/", path)
            }
        }
        var songs: [MPDSong] = []
        for track in tracks {
            guard let file = Self.relative(track.path, roots) else { continue }
            songs.append(Self.song(track, file: file))
        }
        songs.sort { $0.file < $1.file }
        self.songs = songs
        var directories: Set<String> = []
        for song in songs {
            var dir = Self.parent(song.file)
            while !dir.isEmpty, directories.insert(dir).inserted {
                dir = Self.parent(dir)
            }
        }
        self.directories = directories
        byFile = Dictionary(songs.enumerated().map { ($1.file, $0) }, uniquingKeysWith: { a, _ in a })
        byURI = Dictionary(songs.enumerated().map { ($1.uri, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The folder part of a relative path ("" at the top).
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    public static let empty = MusicDatabase(folders: [], tracks: [])

    static func relative(_ path: String, _ roots: [(prefix: String, folder: String)]) -> String? {
        for (prefix, folder) in roots where path.hasPrefix(folder + "/") {
            return prefix + String(path.dropFirst(folder.count + 1))
        }
        return nil
    }

    static func song(_ t: LibraryTrack, file: String) -> MPDSong {
        var tags: [(name: String, value: String)] = []
        if !t.artist.isEmpty { tags.append(("Artist", t.artist)) }
        if !t.albumArtist.isEmpty { tags.append(("AlbumArtist", t.albumArtist)) }
        if !t.title.isEmpty { tags.append(("Title", t.title)) }
        if !t.album.isEmpty { tags.append(("Album", t.album)) }
        if let n = t.trackNumber { tags.append(("Track", String(n))) }
        if let d = t.discNumber { tags.append(("Disc", String(d))) }
        if let y = t.year { tags.append(("Date", String(y))) }
        if let g = t.genre, !g.isEmpty { tags.append(("Genre", g)) }
        return MPDSong(file: file, uri: t.uri, tags: tags, duration: t.duration > 0 ? t.duration : nil, artURL: t.artUrl)
    }

    public func song(file: String) -> MPDSong? { byFile[file].map { songs[$0] } }
    public func song(uri: String) -> MPDSong? { byURI[uri].map { songs[$0] } }

    /// A relative path without leading or trailing slashes ("" for the root).
    public static func normalize(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }

    public func isDirectory(_ path: String) -> Bool { path.isEmpty || directories.contains(path) }

    /// Songs in a folder and below it (all songs for the root).
    public func songs(under path: String) -> [MPDSong] {
        guard !path.isEmpty else { return songs }
        let prefix = path + "/"
        return songs.filter { $0.file.hasPrefix(prefix) }
    }

    /// The direct children of a folder: subfolders and songs, sorted.
    public func children(of path: String) -> (directories: [String], songs: [MPDSong]) {
        let prefix = path.isEmpty ? "" : path + "/"
        let dirs = directories.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.sorted()
        let files = songs.filter { $0.file.hasPrefix(prefix) && !$0.file.dropFirst(prefix.count).contains("/") }
        return (dirs, files)
    }

    /// The file path of a song in the music folders, for a file:// URI or an absolute path; nil when outside.
    public func file(forURI uri: String) -> String? {
        if let song = song(uri: uri) { return song.file }
        let path: String
        if uri.hasPrefix("file://"), let url = URL(string: uri) { path = url.path } else if uri.hasPrefix("/") { path = uri } else { return nil }
        return Self.relative(path, roots)
    }

    /// The URI the player opens for a relative file path, whether indexed or not; nil when it is not in a music
    /// folder.
    public func uri(forFile file: String) -> String? {
        if let song = song(file: file) { return song.uri }
        for (prefix, folder) in roots where prefix.isEmpty || file.hasPrefix(prefix) {
            let path = folder + "/" + file.dropFirst(prefix.count)
            if FileManager.default.fileExists(atPath: path) { return URL(fileURLWithPath: path).absoluteString }
        }
        return nil
    }
}

import Foundation
import RawPaths
import GRDB
import TonearmCore

/// The music folders as browse roots: folders on disk (even empty ones), files as the index holds them, with tags.
extension LocalLibrary: BrowsableSource {
    /// "library" for a single music folder; "library-NAME" for each of several (NAME its last component,
    /// with "-2", "-3", … when names repeat).
    public var browseRoots: [BrowseRoot] {
        browseFolders.map(\.root)
    }

    var browseFolders: [(root: BrowseRoot, folder: RawPath)] {
        if roots.count == 1 { return [(BrowseRoot(id: "library", title: "Music library"), roots[0])] }
        var used = Set<String>()
        return roots.map { folder in
            let name = String(decoding: folder.lastComponent, as: UTF8.self)
            let base = "library-" + (name.isEmpty ? "root" : name)
            var id = base
            var n = 2
            while !used.insert(id).inserted {
                id = "\(base)-\(n)"
                n += 1
            }
            return (BrowseRoot(id: id, title: "Music library: \(folder.string)"), folder)
        }
    }

    public func list(root: String, path: String) async throws -> [BrowseEntry] {
        let folders = browseFolders
        guard let musicFolder = folders.first(where: { $0.root.id == root })?.folder else {
            throw TonearmError.noSuchRoot(root, known: folders.map(\.root.id))
        }
        let (resolved, disk) = try await onReadQueue {
            let resolved = try Browse.resolve(path, under: URL(fileURLWithPath: musicFolder.string))
            return (resolved, try Browse.diskEntries(of: resolved))
        }
        var entries = disk.filter { $0.isFolder && !isExcluded($0.url) }.map { BrowseEntry.folder($0.name, path: resolved.childPath($0.name)) }

        // Files: the index's rows directly inside this folder, by the path the walk saw (symlinks kept).
        var folderPath = musicFolder
        for part in resolved.relativePath.split(separator: "/") { folderPath = folderPath.appending(Array(part.utf8)) }
        let folderURI = folderPath.uri
        let prefix = folderURI + "/"
        let tracks = try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Index.trackColumns) FROM tracks
                WHERE uri > ? AND uri < ? AND instr(substr(uri, ?), '/') = 0
                """, arguments: [prefix, folderURI + "0", prefix.utf8.count + 1]).map(Index.track)
        }
        let visible = Set(disk.filter(\.isRegularFile).map(\.name))
        for track in tracks {
            let name = String(track.path.split(separator: "/", omittingEmptySubsequences: true).last ?? "")
            // Hidden files are never indexed; a file that left the root through a link is not shown.
            guard !name.isEmpty, visible.contains(name) else { continue }
            entries.append(Self.entry(track, name: name, path: resolved.childPath(name)))
        }
        return Browse.sorted(entries)
    }

    static func entry(_ t: LibraryTrack, name: String, path: String) -> BrowseEntry {
        var extra: [String: BrowseValue] = [:]
        if !t.albumArtist.isEmpty { extra["albumArtist"] = .string(t.albumArtist) }
        if let g = t.genre, !g.isEmpty { extra["genre"] = .string(g) }
        if let y = t.year { extra["year"] = .int(y) }
        if let n = t.trackNumber { extra["trackNumber"] = .int(n) }
        if let n = t.discNumber { extra["discNumber"] = .int(n) }
        if let art = t.artUrl { extra["artUrl"] = .string(art) }
        return BrowseEntry(name: name, path: path, isFolder: false, uri: t.uri, title: t.title,
                           artist: t.artist.isEmpty ? nil : t.artist, album: t.album.isEmpty ? nil : t.album,
                           duration: t.duration > 0 ? t.duration : nil, extra: extra)
    }
}

extension LocalLibrary {
    /// Runs blocking file-system work on the read queue, never on the caller's executor.
    func onReadQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await readQueue.run(body)
    }

    /// Folders that are not part of the library (the shares inbox and rejects).
    private func isExcluded(_ url: URL) -> Bool {
        RawPath(fileURL: url.standardizedFileURL).map { excluded.contains($0) } ?? false
    }
}

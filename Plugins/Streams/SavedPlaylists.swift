import Foundation
import Synchronization
import TonearmCore

/// One playlist the player knows: saved by the user (M3U8 in the playlists folder) or found in a music folder.
public struct PlaylistInfo: Sendable, Equatable {
    /// A D-Bus object path that stays the same for the same file.
    public var id: String
    public var name: String
    public var file: URL
    /// Saved by Tonearm (can be overwritten and removed); false for lists found in the music folders.
    public var isSaved: Bool
    /// A smart playlist (a `.smart` rules file in the playlists folder): its tracks come from the library.
    public var isSmart: Bool = false
    public var created: Date
    public var modified: Date
    /// When it was last played through Tonearm, if ever.
    public var played: Date?
}

/// Saved playlists under `$XDG_DATA_HOME/tonearm/playlists/` (M3U8, written atomically), the smart playlists' rules
/// files there (`.smart`, listed; the library evaluates them) and the playlist files found in the music folders; when
/// each was last played is kept beside them in `.played.json`.
public final class SavedPlaylists: Sendable {
    public let folder: URL
    let musicFolders: [URL]
    let maximumEntries: Int
    private let playedFile: URL
    private let lock = Mutex<Void>(())
    /// How long a walk of the music folders is reused: PlaylistCount is read by every panel widget's GetAll, and
    /// walking a large library on each read would hold the bus.
    let musicScanLifetime: Duration
    private let musicScan = Mutex<(files: [URL], at: ContinuousClock.Instant)?>(nil)

    public init(folder: URL, musicFolders: [URL], maximumEntries: Int = 10_000, musicScanLifetime: Duration = .seconds(30)) {
        self.folder = folder
        self.musicFolders = musicFolders
        self.maximumEntries = maximumEntries
        self.musicScanLifetime = musicScanLifetime
        playedFile = folder.appendingPathComponent(".played.json")
    }

    static let idPrefix = "/org/tonearm/playlist/"

    /// The id of the playlist in `file`: a hash of its path (object paths allow only [A-Za-z0-9_]).
    static func id(for file: URL) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in file.standardizedFileURL.path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return idPrefix + "p" + String(hash, radix: 16)
    }

    /// Every playlist: the saved ones, then those in the music folders (at most a few levels deep).
    public func list() -> [PlaylistInfo] {
        lock.withLock { _ in
            let played = readPlayed()
            var out: [PlaylistInfo] = []
            var seen = Set<String>()
            for (file, saved) in files() where seen.insert(file.path).inserted {
                guard let values = try? file.resourceValues(forKeys: [.creationDateKey, .contentModificationDateKey]) else { continue }
                let modified = values.contentModificationDate ?? Date(timeIntervalSince1970: 0)
                let id = Self.id(for: file)
                out.append(PlaylistInfo(id: id, name: file.deletingPathExtension().lastPathComponent, file: file, isSaved: saved,
                                        isSmart: saved && SmartPlaylistFile.isSmart(file), created: values.creationDate ?? modified,
                                        modified: modified, played: played[id].map { Date(timeIntervalSince1970: $0) }))
            }
            return out
        }
    }

    private func files() -> [(URL, Bool)] {
        let manager = FileManager.default
        var out: [(URL, Bool)] = []
        let saved = (try? manager.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])) ?? []
        for file in saved.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) where PlaylistFormat.named(path: file.path) != nil || SmartPlaylistFile.isSmart(file) {
            out.append((file, true))
        }
        return out + musicFolderPlaylists().map { ($0, false) }
    }

    /// The playlist files in the music folders (a few levels deep, a thousand per folder), walked again once
    /// the last walk is older than `musicScanLifetime`.
    private func musicFolderPlaylists() -> [URL] {
        let now = ContinuousClock.now
        if let last = musicScan.withLock({ $0 }), now - last.at < musicScanLifetime { return last.files }
        let manager = FileManager.default
        var out: [URL] = []
        for root in musicFolders {
            guard let walker = manager.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                  options: [.skipsHiddenFiles, .skipsPackageDescendants]) else { continue }
            var found: [URL] = []
            for case let file as URL in walker {
                if walker.level > 4 { walker.skipDescendants() }
                if PlaylistFormat.named(path: file.path) != nil { found.append(file) }
                if found.count >= 1000 { break }
            }
            out += found.sorted { $0.path < $1.path }
        }
        musicScan.withLock { $0 = (out, now) }
        return out
    }

    /// The playlist named `nameOrID` (a saved playlist's name first, then any playlist's name or id).
    public func find(_ nameOrID: String) throws(TonearmError) -> PlaylistInfo {
        let all = list()
        if let hit = all.first(where: { $0.isSaved && $0.name == nameOrID }) ?? all.first(where: { $0.id == nameOrID || $0.name == nameOrID }) {
            return hit
        }
        throw TonearmError(.noSuchPlaylist, "no playlist named \(nameOrID) (tonearm playlist list shows them)")
    }

    /// The entries of a playlist as URIs (what cannot be read is left out by the player when it is queued).
    public func entries(_ playlist: PlaylistInfo) throws(TonearmError) -> [PlaylistEntry] {
        guard let data = FileManager.default.contents(atPath: playlist.file.path),
              let format = PlaylistFormat.named(path: playlist.file.path) else {
            throw TonearmError(.notReadable, "cannot read the playlist \(playlist.file.path)")
        }
        do {
            return try PlaylistParser.parse(PlaylistParser.text(data), format: format, maximumEntries: maximumEntries).map { entry in
                var resolved = entry
                if case .success(let uri) = PlaylistLocations.resolve(entry.location, against: playlist.file) { resolved.location = uri }
                return resolved
            }
        } catch {
            throw TonearmError(.invalidPlaylist, "cannot read the playlist \(playlist.file.path): \(error.message)")
        }
    }

    /// A name a file can be made of: not empty, no slash, not hidden, not too long.
    static func check(_ name: String) throws(TonearmError) {
        guard !name.isEmpty, name.count <= 200, !name.contains("/"), !name.hasPrefix("."), !name.contains("\0"),
              !name.contains(where: \.isNewline) else {
            throw TonearmError.invalidValue("a playlist name must be 1 to 200 characters, without '/' or a leading '.': \"\(name)\"")
        }
    }

    /// Writes `entries` as the saved playlist `name` (replacing a saved one of that name), atomically.
    @discardableResult
    public func save(_ name: String, entries: [PlaylistEntry]) throws(TonearmError) -> PlaylistInfo {
        try Self.check(name)
        var text = "#EXTM3U\n"
        for entry in entries {
            if entry.title != nil || entry.duration != nil {
                let seconds = entry.duration.map { Int($0.rounded()) } ?? -1
                text += "#EXTINF:\(seconds),\(entry.title ?? "")\n"
            }
            text += entry.location + "\n"
        }
        let file = folder.appendingPathComponent(name + ".m3u8")
        do {
            try lock.withLock { _ in
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(text.utf8).write(to: file, options: .atomic)
            }
        } catch {
            throw TonearmError(.writeFailed, "cannot write \(file.path): \(error.localizedDescription)")
        }
        return try find(name)
    }

    /// Removes a saved playlist (never a list found in a music folder: that file is the user's).
    public func remove(_ name: String) throws(TonearmError) {
        let playlist = try find(name)
        guard playlist.isSaved else {
            throw TonearmError(.notSaved, "\(playlist.file.path) is in a music folder, not a saved playlist; Tonearm leaves it alone")
        }
        do {
            try lock.withLock { _ in try FileManager.default.removeItem(at: playlist.file) }
        } catch {
            throw TonearmError(.writeFailed, "cannot remove \(playlist.file.path): \(error.localizedDescription)")
        }
    }

    /// Notes that a playlist was played now (for the "Played" ordering).
    public func markPlayed(_ id: String, at date: Date = Date()) {
        lock.withLock { _ in
            var played = readPlayed()
            played[id] = date.timeIntervalSince1970
            guard let data = try? JSONEncoder().encode(played) else { return }
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try? data.write(to: playedFile, options: .atomic)
        }
    }

    private func readPlayed() -> [String: Double] {
        guard let data = FileManager.default.contents(atPath: playedFile.path) else { return [:] }
        return (try? JSONDecoder().decode([String: Double].self, from: data)) ?? [:]
    }
}

/// The MPRIS 2.2 playlist orderings (Playlist_Ordering values) and how each sorts.
public enum PlaylistOrdering: String, Sendable, CaseIterable {
    case alphabetical = "Alphabetical", created = "Created", modified = "Modified", played = "Played", user = "User"

    /// `playlists` in this order (ascending, oldest first), or reversed.
    public func sort(_ playlists: [PlaylistInfo], reversed: Bool = false) -> [PlaylistInfo] {
        let indexed = Array(playlists.enumerated())
        func key(_ p: PlaylistInfo) -> (Double, String) {
            switch self {
            case .alphabetical: return (0, p.name.lowercased())
            case .created: return (p.created.timeIntervalSince1970, p.name.lowercased())
            case .modified: return (p.modified.timeIntervalSince1970, p.name.lowercased())
            case .played: return (p.played?.timeIntervalSince1970 ?? 0, p.name.lowercased())
            case .user: return (0, "")
            }
        }
        let sorted = indexed.sorted { a, b in
            let (ka, kb) = (key(a.element), key(b.element))
            if ka.0 != kb.0 { return ka.0 < kb.0 }
            if ka.1 != kb.1 { return ka.1 < kb.1 }
            return a.offset < b.offset
        }.map(\.element)
        return reversed ? sorted.reversed() : sorted
    }
}

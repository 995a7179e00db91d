import Foundation
import RawPaths

/// One top-level folder a source offers for browsing (`org.tonearm.Browser1`).
public struct BrowseRoot: Sendable, Equatable, Codable {
    /// Stable and unique among all sources ("library", "midi").
    public var id: String
    /// For people ("Music library").
    public var title: String

    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// A source-specific metadata value of a browse entry.
public enum BrowseValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case strings([String])
}

/// One folder or file of a listing.
public struct BrowseEntry: Sendable, Equatable {
    /// The file or folder name.
    public var name: String
    /// Relative to the root, "/"-separated; pass it back to `list` to open a folder.
    public var path: String
    public var isFolder: Bool
    /// What to play (files only).
    public var uri: String?
    public var title: String?
    public var artist: String?
    public var album: String?
    /// Seconds.
    public var duration: Double?
    /// Whatever else the source knows, by D-Bus key ("trackNumber", "lyrics", …).
    public var extra: [String: BrowseValue]

    public init(name: String, path: String, isFolder: Bool, uri: String? = nil, title: String? = nil,
                artist: String? = nil, album: String? = nil, duration: Double? = nil, extra: [String: BrowseValue] = [:]) {
        self.name = name
        self.path = path
        self.isFolder = isFolder
        self.uri = uri
        self.title = title
        self.artist = artist
        self.album = album
        self.duration = duration
        self.extra = extra
    }

    /// A folder entry.
    public static func folder(_ name: String, path: String) -> BrowseEntry {
        BrowseEntry(name: name, path: path, isFolder: true)
    }
}

/// Where a browser reopens: the folder of the last choice, the folders leading to it, and what to select.
public struct BrowsePlace: Sendable, Equatable {
    /// The folder to open, relative to the root ("" is the root).
    public var folder: String
    /// The root, then each folder down to `folder`: (name, relative path).
    public var trail: [BrowseStep]
    /// The name of the entry to select in `folder`; nil when the remembered file is gone or nothing was chosen.
    public var selected: String?

    public init(folder: String, trail: [BrowseStep], selected: String?) {
        self.folder = folder
        self.trail = trail
        self.selected = selected
    }

    /// The root itself, nothing selected.
    public static func root(title: String) -> BrowsePlace {
        BrowsePlace(folder: "", trail: [BrowseStep(name: title, path: "")], selected: nil)
    }
}

/// One folder of a trail.
public struct BrowseStep: Sendable, Equatable {
    public var name: String
    public var path: String

    public init(name: String, path: String) {
        self.name = name
        self.path = path
    }
}

/// A source whose music lives in folders a person can walk (the library, MIDI files).
public protocol BrowsableSource: Sendable {
    /// The roots this source offers; ids are unique among all sources.
    var browseRoots: [BrowseRoot] { get }
    /// The folder at `path` (relative, "" = the root) under the root `root`, in `Browse.sorted` order.
    /// Throws `TonearmError` noSuchRoot, outsideRoot or noSuchFolder.
    func list(root: String, path: String) async throws -> [BrowseEntry]
    /// The file at `path` under `root`, as `list` shows it; throws noSuchFile when there is none.
    func entry(root: String, path: String) async throws -> BrowseEntry
    /// Remembers the file at `path` as the root's last choice (roots that keep none accept and forget it).
    func choose(root: String, path: String) async throws
    /// Where to reopen the root: its last choice, or the root itself.
    func resume(root: String) async throws -> BrowsePlace
}

extension BrowsableSource {
    public func entry(root: String, path: String) async throws -> BrowseEntry {
        let parts = try Browse.components(of: path)
        guard let name = parts.last else { throw TonearmError.notAFile(path) }
        let entries = try await list(root: root, path: parts.dropLast().joined(separator: "/"))
        guard let found = entries.first(where: { $0.name == name }) else { throw TonearmError.noSuchFile(path) }
        guard !found.isFolder else { throw TonearmError.notAFile(path) }
        return found
    }

    public func choose(root: String, path: String) async throws {
        _ = try await entry(root: root, path: path)
    }

    public func resume(root: String) async throws -> BrowsePlace {
        guard let found = browseRoots.first(where: { $0.id == root }) else {
            throw TonearmError.noSuchRoot(root, known: browseRoots.map(\.id))
        }
        return .root(title: found.title)
    }
}

extension TonearmError {
    public static func noSuchRoot(_ id: String, known: [String]) -> TonearmError {
        let choices = known.isEmpty ? "there are none" : "known roots: " + known.joined(separator: ", ")
        return .init(.noSuchRoot, "no such browse root '\(id)' (\(choices))")
    }

    public static func outsideRoot(_ path: String, _ why: String) -> TonearmError {
        .init(.outsideRoot, "refused '\(path)': \(why)")
    }

    public static func noSuchFolder(_ path: String, _ why: String = "no such folder") -> TonearmError {
        .init(.noSuchFolder, "\(why): \(path)")
    }
}

/// Helpers every browser needs: safe resolution of relative paths under a root, what to leave out, and order.
public enum Browse {
    /// A folder found under a root.
    public struct ResolvedFolder: Sendable, Equatable {
        /// The root as given, standardized.
        public var root: URL
        /// The root with every symbolic link resolved.
        public var realRoot: URL
        /// The normalized relative path ("" for the root; no "." or empty components).
        public var relativePath: String
        /// `root` + the relative path, symlinks kept (the path a walk of the root sees).
        public var url: URL
        /// The folder with every symbolic link resolved (inside `realRoot`).
        public var realURL: URL

        /// The relative path of a child named `name`.
        public func childPath(_ name: String) -> String {
            relativePath.isEmpty ? name : relativePath + "/" + name
        }
    }

    /// The trail from the root (titled `rootTitle`) down to the folder at the normalized relative path `folder`.
    public static func trail(to folder: String, rootTitle: String) -> [BrowseStep] {
        var steps = [BrowseStep(name: rootTitle, path: "")]
        var path = ""
        for part in folder.split(separator: "/") {
            path = path.isEmpty ? String(part) : path + "/" + part
            steps.append(BrowseStep(name: String(part), path: path))
        }
        return steps
    }

    /// Entries whose names start with "." are hidden.
    public static func isHidden(_ name: String) -> Bool { name.hasPrefix(".") }

    /// The components of a relative path: "" and "." components dropped; an absolute path or a ".." component
    /// throws outsideRoot, a hidden component noSuchFolder.
    public static func components(of relativePath: String) throws -> [String] {
        if relativePath.hasPrefix("/") {
            throw TonearmError.outsideRoot(relativePath, "paths are relative to the root; absolute paths are not allowed")
        }
        if relativePath.contains("\0") {
            throw TonearmError.noSuchFolder(relativePath, "a path cannot contain a NUL byte")
        }
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
        if parts.contains("..") {
            throw TonearmError.outsideRoot(relativePath, "'..' would leave the root")
        }
        if let hidden = parts.first(where: isHidden) {
            throw TonearmError.noSuchFolder(relativePath, "'\(hidden)' is hidden")
        }
        return parts
    }

    /// The real path of `url` (every symbolic link resolved), or nil when it does not exist.
    public static func realPath(_ url: URL) -> URL? {
        guard let resolved = realpath(url.path, nil) else { return nil }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved))
    }

    /// Whether `url` is `folder` or inside it, comparing whole path components (so "/music2" is not in "/music").
    public static func isWithin(_ url: URL, _ folder: URL) -> Bool {
        let inner = url.standardizedFileURL.pathComponents
        let outer = folder.standardizedFileURL.pathComponents
        return inner.count >= outer.count && Array(inner.prefix(outer.count)) == outer
    }

    /// Resolves `relativePath` under `root`: refuses ".." and absolute paths, and a path that symbolic links lead
    /// outside the real root (outsideRoot); a path that does not exist, is not a folder, or is hidden is
    /// noSuchFolder.
    public static func resolve(_ relativePath: String, under root: URL) throws -> ResolvedFolder {
        let parts = try components(of: relativePath)
        let root = root.standardizedFileURL
        guard let realRoot = realPath(root), isDirectory(realRoot) else {
            throw TonearmError.noSuchFolder(root.path, "the root folder does not exist")
        }
        var url = root
        for part in parts { url.appendPathComponent(part) }
        let normalized = parts.joined(separator: "/")
        guard let real = realPath(url) else {
            throw TonearmError.noSuchFolder(normalized)
        }
        guard isWithin(real, realRoot) else {
            throw TonearmError.outsideRoot(normalized, "it leads to \(real.path), outside the root \(root.path)")
        }
        guard isDirectory(real) else {
            throw TonearmError.noSuchFolder(normalized, "not a folder")
        }
        return ResolvedFolder(root: root, realRoot: realRoot, relativePath: normalized, url: url, realURL: real)
    }

    /// A child of a folder on disk.
    public struct DiskEntry: Sendable, Equatable {
        /// The name as text (a byte that is not UTF-8 shows as U+FFFD).
        public var name: String
        /// Inside the folder's `url` (symlinks kept).
        public var url: URL
        /// The same, as the bytes that name the file (`url` cannot name one whose name is not UTF-8).
        public var path: RawPath
        /// After following symbolic links.
        public var isFolder: Bool
        public var isRegularFile: Bool
    }

    /// The visible children of `folder` that stay inside its root: hidden names, dangling links and links that
    /// lead outside the root are left out. Unordered. A file whose name is not UTF-8 (a Latin-1 rip's) is listed, to
    /// be played by its path's bytes; such a folder is left out, as no relative path can name it.
    public static func diskEntries(of folder: ResolvedFolder) throws -> [DiskEntry] {
        guard let dir = opendir(folder.url.path) else {
            throw TonearmError.noSuchFolder(folder.relativePath, "cannot read folder (\(String(cString: strerror(errno))))")
        }
        defer { closedir(dir) }
        var out: [DiskEntry] = []
        while let entry = readdir(dir) {
            let bytes: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            let name = String(decoding: bytes, as: UTF8.self)
            if name.isEmpty || isHidden(name) { continue }
            let url = folder.url.appendingPathComponent(name)
            let path = RawPath(folder.url.path).appending(bytes)
            var info = stat()
            guard path.withCString({ stat($0, &info) }) == 0 else { continue }
            let mode = info.st_mode & S_IFMT
            if mode == S_IFDIR, !path.isValidUTF8 { continue }
            var link = stat()
            if path.withCString({ lstat($0, &link) }) == 0, (link.st_mode & S_IFMT) == S_IFLNK {
                guard let real = realPath(url), isWithin(real, folder.realRoot) else { continue }
            }
            out.append(DiskEntry(name: name, url: url, path: path, isFolder: mode == S_IFDIR, isRegularFile: mode == S_IFREG))
        }
        return out
    }

    /// Natural, case- and accent-insensitive order of names: digit runs compare as numbers, so "Track 2" comes
    /// before "Track 10"; ties are broken by the exact name, so the order is total.
    public static func naturalPrecedes(_ a: String, _ b: String) -> Bool {
        let order = naturalCompare(a, b)
        return order != .orderedSame ? order == .orderedAscending : a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    }

    /// The natural comparison of `naturalPrecedes`, without its tie-break on the exact name.
    public static func naturalCompare(_ a: String, _ b: String) -> ComparisonResult {
        compare(chunks(fold(a)), chunks(fold(b)))
    }

    private static func compare(_ x: [Chunk], _ y: [Chunk]) -> ComparisonResult {
        // Leading zeros only decide when nothing else does ("a01b" < "a1c", "Track 2" < "Track 02").
        var zeros = ComparisonResult.orderedSame
        for (p, q) in zip(x, y) {
            switch (p, q) {
            case (.number(let m, let mz), .number(let n, let nz)):
                if m.count != n.count { return m.count < n.count ? .orderedAscending : .orderedDescending }
                if m != n { return m.lexicographicallyPrecedes(n) ? .orderedAscending : .orderedDescending }
                if mz != nz, zeros == .orderedSame { zeros = mz < nz ? .orderedAscending : .orderedDescending }
            case (.text(let s), .text(let t)):
                if s != t { return s.lexicographicallyPrecedes(t) ? .orderedAscending : .orderedDescending }
            case (.number, .text):
                return .orderedAscending
            case (.text, .number):
                return .orderedDescending
            }
        }
        if x.count != y.count { return x.count < y.count ? .orderedAscending : .orderedDescending }
        return zeros
    }

    /// Folders first, then files; each in natural order of their names.
    public static func sorted(_ entries: [BrowseEntry]) -> [BrowseEntry] {
        // Each name is folded and split once, not once per comparison (folders of thousands of files).
        let keys = entries.map { chunks(fold($0.name)) }
        let order = entries.indices.sorted { i, j in
            let a = entries[i], b = entries[j]
            if a.isFolder != b.isFolder { return a.isFolder }
            let result = compare(keys[i], keys[j])
            return result != .orderedSame ? result == .orderedAscending : a.name.unicodeScalars.lexicographicallyPrecedes(b.name.unicodeScalars)
        }
        return order.map { entries[$0] }
    }

    private enum Chunk {
        /// Digits without leading zeros, and how many zeros there were.
        case number([Unicode.Scalar], zeros: Int)
        case text([Unicode.Scalar])
    }

    private static func fold(_ s: String) -> String {
        s.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    private static func chunks(_ s: String) -> [Chunk] {
        var out: [Chunk] = []
        var current: [Unicode.Scalar] = []
        var inDigits = false
        func flush() {
            guard !current.isEmpty else { return }
            if inDigits {
                let zeros = current.prefix { $0 == "0" }.count
                out.append(.number(Array(current.dropFirst(zeros)), zeros: zeros))
            } else {
                out.append(.text(current))
            }
            current = []
        }
        for scalar in s.unicodeScalars {
            let digit = scalar.isASCII && ("0"..."9").contains(scalar)
            if digit != inDigits { flush(); inDigits = digit }
            current.append(scalar)
        }
        flush()
        return out
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var info = stat()
        return stat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}

import Foundation
import RawPaths

/// A candidate audio file found by a walk.
struct FoundFile: Sendable {
    var path: RawPath
    /// `path.uri`, built once by the walk: a scan looks every file up by it several times.
    var uri: String
    var size: Int
    /// Modification time in nanoseconds since the epoch.
    var mtime: Int64
    /// The folder image next to it, if any.
    var folderImage: FolderImage?
}

/// A cover/folder/front image in a folder, identified by path, size and mtime (so a change is noticed).
struct FolderImage: Sendable, Hashable {
    var path: RawPath
    var size: Int
    var mtime: Int64

    var signature: String { "\(path.uri)|\(size)|\(mtime)" }
}

/// What a walk found.
struct WalkResult {
    var files: [FoundFile] = []
    /// Folders and entries that could not be walked (loops, unreadable folders, dangling links), by path.
    var failures: [(RawPath, String)] = []
    /// Every folder walked (for inotify watches).
    var folders: [RawPath] = []
    /// Folders left out, with everything below them (the received-shares inbox and rejects).
    var excluded: Set<RawPath> = []
}

/// Recursive walks of music folders with raw byte paths: hidden entries skipped, symlinks followed, each folder
/// (device + inode) walked once, loops reported.
enum Walker {
    struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    static let imageNames: [String] = ["cover", "folder", "front"]
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png"]

    /// Walks `root` (a folder inside `musicFolder`, or the music folder itself). Folders between the music folder
    /// and `root` count as ancestors, so a link back to them is a loop too.
    static func walk(_ root: RawPath, musicFolder: RawPath, into result: inout WalkResult) {
        var ancestors: [Identity: RawPath] = [:]
        var ancestor = root
        while ancestor != musicFolder, ancestor.isWithin(musicFolder), ancestor.bytes.count > musicFolder.bytes.count {
            ancestor = ancestor.parent
            if let id = identity(ancestor) { ancestors[id] = ancestor }
        }
        var visited = Set(ancestors.keys)
        guard let rootIdentity = identity(root) else { return }
        walkFolder(root, identity: rootIdentity, ancestors: &ancestors, visited: &visited, into: &result)
    }

    static func identity(_ path: RawPath) -> Identity? {
        var info = stat()
        guard path.withCString({ stat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// `fstatat` of `name` in the open folder `folderFD`.
    private static func statEntry(_ name: [UInt8], in folderFD: Int32, _ info: inout stat, followingLinks: Bool) -> Int32 {
        var zero = name
        zero.append(0)
        return zero.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { fstatat(folderFD, $0.baseAddress!, &info, followingLinks ? 0 : AT_SYMLINK_NOFOLLOW) }
        }
    }

    private static func walkFolder(_ folder: RawPath, identity: Identity, ancestors: inout [Identity: RawPath],
                                   visited: inout Set<Identity>, into result: inout WalkResult) {
        visited.insert(identity)
        ancestors[identity] = folder
        defer { ancestors[identity] = nil }
        guard let dir = folder.withCString({ opendir($0) }) else {
            result.failures.append((folder, "cannot read folder: \(String(cString: strerror(errno)))"))
            return
        }
        result.folders.append(folder)
        var names: [(name: [UInt8], type: UInt8)] = []
        while let entry = readdir(dir) {
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name.isEmpty || name.first == UInt8(ascii: ".") { continue }
            names.append((name, entry.pointee.d_type))
        }
        // Entries are looked at relative to the open folder: the kernel then resolves one name, not the whole path.
        let folderFD = dirfd(dir)
        names.sort { $0.name.lexicographicallyPrecedes($1.name) }

        var files: [FoundFile] = []
        var image: (rank: Int, image: FolderImage)?
        var subfolders: [(RawPath, Identity)] = []
        for (name, type) in names {
            let path = folder.appending(name)
            let ext = path.lowercasedExtension
            let isAudio = TagReader.audioExtensions.contains(ext)
            let imageRank = imageExtensions.contains(ext)
                ? imageNames.firstIndex(of: path.stem.lowercased()) : nil
            // Regular files with other names need no stat.
            if type == UInt8(DT_REG), !isAudio, imageRank == nil { continue }
            var info = stat()
            guard Self.statEntry(name, in: folderFD, &info, followingLinks: true) == 0 else {
                if isAudio {
                    let reason = String(cString: strerror(errno))
                    var link = stat()
                    let dangling = Self.statEntry(name, in: folderFD, &link, followingLinks: false) == 0
                        && (link.st_mode & S_IFMT) == S_IFLNK
                    result.failures.append((path, dangling ? "broken symbolic link" : "cannot read: \(reason)"))
                }
                continue
            }
            let mode = info.st_mode & S_IFMT
            if mode == S_IFDIR {
                if result.excluded.contains(path) { continue }
                let id = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                if let target = ancestors[id] {
                    result.failures.append((path, "symbolic link loop: leads back to \(target.string)"))
                } else if !visited.contains(id) {
                    subfolders.append((path, id))
                }
                // Else: the same folder reached another way; it is indexed once.
            } else if mode == S_IFREG {
                let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
                if isAudio {
                    files.append(FoundFile(path: path, uri: path.uri, size: Int(info.st_size), mtime: mtime))
                } else if let rank = imageRank, info.st_size > 0, rank < (image?.rank ?? Int.max) {
                    image = (rank, FolderImage(path: path, size: Int(info.st_size), mtime: mtime))
                }
            }
        }
        for i in files.indices { files[i].folderImage = image?.image }
        result.files += files
        closedir(dir)
        for (path, id) in subfolders where !visited.contains(id) {
            walkFolder(path, identity: id, ancestors: &ancestors, visited: &visited, into: &result)
        }
    }
}

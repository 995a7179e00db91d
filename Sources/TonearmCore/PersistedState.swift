import Foundation

/// What survives a restart: the queue, where we were in it, and the settings a user changed.
public struct PersistedState: Sendable, Codable, Equatable {
    public var version = 1
    public var queue = PlayQueue()
    /// Position in the current track, microseconds.
    public var position: Int64 = 0
    public var volume = 1.0
    public var tickIntervalMicroseconds: Int64?

    public init() {}
}

/// Reads and writes the state file atomically: temp file, fsync, rename, fsync of the folder,
/// so a `kill -9` at any moment leaves the old state or the new one, never a torn one.
public struct StateStore: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The saved state; nil when there is none. A corrupt file is reported and kept aside, never deleted.
    public func load() throws -> PersistedState? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        do {
            return try JSONDecoder().decode(PersistedState.self, from: data)
        } catch {
            let aside = url.path + ".corrupt"
            try? FileManager.default.removeItem(atPath: aside)
            try? FileManager.default.moveItem(atPath: url.path, toPath: aside)
            throw TonearmError("CorruptState", "state file \(url.path) could not be read (\(error)); kept as \(aside), starting fresh")
        }
    }

    public func save(_ state: PersistedState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(try encoder.encode(state), to: url)
    }
}

/// Writes a file so readers see either the old or the new contents, even across a crash.
public enum AtomicFile {
    public static func write(_ data: Data, to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temp = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        let fd = open(temp.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("cannot create \(temp.path)") }
        var ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temp.path, url.path) == 0 else {
            let error = posixError("cannot write \(url.path)")
            unlink(temp.path)
            throw error
        }
        let dirfd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirfd >= 0 {
            fsync(dirfd)
            close(dirfd)
        }
    }

    private static func posixError(_ what: String) -> TonearmError {
        TonearmError("IOError", "\(what): \(String(cString: strerror(errno)))")
    }
}

import Foundation

/// What survives a restart: the queue, where we were in it, and the settings a user changed.
public struct PersistedState: Sendable, Codable, Equatable {
    public var version = 1
    public var queue = PlayQueue()
    /// Position in the current track, microseconds.
    public var position: Int64 = 0
    public var volume = 1.0
    public var tickIntervalMicroseconds: Int64?
    /// The ReplayGain mode last set live (over D-Bus or `tonearm replaygain`); it wins over the config's, as in mpd.
    public var replayGainMode: String?
    /// The equalizer as last changed live; it wins over `[playback.equalizer]`, as the ReplayGain mode does.
    public var equalizer: EqualizerState?
    /// The crossfade length and silence threshold, when set live.
    public var crossfadeSeconds: Double?
    public var crossfadeSilenceThreshold: Double?
    /// The output last switched to live; it wins over the config's `output` at the next start, as mpd keeps its
    /// outputs' state, until the config's `output` is changed.
    public var output: SavedOutput?

    public init() {}

    /// The same state at position 0: what the last full save is compared with.
    var withoutPosition: PersistedState {
        var copy = self
        copy.position = 0
        return copy
    }
}

/// An output switched to live, with the config's `output` at the time: a changed config wins over the saved choice.
public struct SavedOutput: Sendable, Codable, Equatable {
    public var name: String
    /// The config's `output` when it was chosen (nil: none, the "default" output).
    public var configured: String?

    public init(name: String, configured: String?) {
        self.name = name
        self.configured = configured
    }
}

/// Reads and writes the state file atomically: temp file, fsync, rename, fsync of the folder,
/// so a `kill -9` at any moment leaves the old state or the new one, never a torn one.
public struct StateStore: Sendable {
    public let url: URL
    /// `positionURL`'s path, made once: building it from the URL each second cost more than writing the record.
    private let positionPath: String

    public init(url: URL) {
        self.url = url
        positionPath = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".position").path
    }

    /// The saved state; nil when there is none. A corrupt file is reported and kept aside, never deleted.
    public func load() throws -> PersistedState? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        do {
            var state = try JSONDecoder().decode(PersistedState.self, from: data)
            if let position = savedPosition(for: state) { state.position = position }
            return state
        } catch {
            let aside = url.path + ".corrupt"
            try? FileManager.default.removeItem(atPath: aside)
            try? FileManager.default.moveItem(atPath: url.path, toPath: aside)
            throw TonearmError(.corruptState, "state file \(url.path) could not be read (\(error)); kept as \(aside), starting fresh")
        }
    }

    public func save(_ state: PersistedState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(try encoder.encode(state), to: url)
        if let current = state.queue.currentID { try savePosition(state.position, of: current) }
    }

    /// Beside the state file: where the current track was, rewritten every second while playing. A few bytes instead
    /// of the whole queue as JSON, and no fsync: a crashed or killed daemon leaves the page cache to the kernel, so only
    /// a power cut can lose those seconds (the state file, written on every real change, is fsynced).
    public var positionURL: URL { URL(fileURLWithPath: positionPath) }

    /// The position record's fixed size: each save overwrites the whole record in place with one `pwrite`, which a
    /// killed process cannot leave half done, and costs no rename (on ext4 a rename over a file starts writeback).
    static let positionRecordSize = 128

    /// Writes "TRACK-PATH POSITION-µs", padded to `positionRecordSize`, in place and without fsync.
    public func savePosition(_ position: Int64, of track: TrackID) throws {
        var record = Array("\(track.path) \(position)".utf8)
        guard record.count < Self.positionRecordSize else { return }  // track paths are short; never a torn record
        record += [UInt8](repeating: 0x20, count: Self.positionRecordSize - 1 - record.count) + [0x0A]
        // The folder is made only when missing: asking FileManager to make it took more than the write (every second).
        var fd = open(positionPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0, errno == ENOENT {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            fd = open(positionPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw AtomicFile.posixError("cannot write \(positionPath)") }
        defer { close(fd) }
        let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == record.count else { throw AtomicFile.posixError("cannot write \(positionPath)") }
        // Nothing to cut but after someone else wrote a longer file; a truncate to the same size still dirtied the
        // inode (a journal write every second).
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size != off_t(record.count) { _ = ftruncate(fd, off_t(record.count)) }
    }

    /// The position file's figure when it is about the state's current track.
    func savedPosition(for state: PersistedState) -> Int64? {
        guard let current = state.queue.currentID, let data = FileManager.default.contents(atPath: positionPath),
              let text = String(data: data, encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, fields[0] == current.path, let position = Int64(fields[1]), position >= 0 else { return nil }
        return position
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

    static func posixError(_ what: String) -> TonearmError {
        TonearmError(.ioError, "\(what): \(String(cString: strerror(errno)))")
    }
}

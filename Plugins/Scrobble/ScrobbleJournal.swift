import Foundation

/// The on-disk queue: an append-only journal of JSON lines in the plugin's folder (`queue.jsonl`), each line written
/// whole and fsync'd before anything depends on it. A listen is added before any attempt to send it, its ids are noted
/// as "sending" before each request, and it is marked done only once the server accepted it; so a kill -9 at any
/// moment loses nothing, and the next start knows which listens a request was under way for. A torn last line (a
/// crash in the middle of a write) is skipped. At start, and when the queue empties, the journal is rewritten with
/// only what is pending (temp file, fsync, rename, fsync of the folder).
///
/// Lines: `{"add": {"id": …, "listen": {…}}}`, `{"sending": [ids]}`, `{"unsent": [ids]}` (that request never reached
/// the server), `{"done": [ids]}`, `{"aside": [ids]}`.
/// Listens refused by the server are kept in `rejected.jsonl` beside it, with the reason.
final class ScrobbleJournal {
    struct Line: Codable {
        var add: QueuedListen?
        var sending: [String]?
        var done: [String]?
        var aside: [String]?
        /// A request for these never reached the server: they are no longer under way.
        var unsent: [String]?
    }

    struct Contents: Equatable {
        var pending: [QueuedListen] = []
        /// Pending listens a request was under way for.
        var uncertain: Set<String> = []
        /// Lines that could not be read (a torn last line).
        var skipped = 0
    }

    let folder: URL
    var file: URL { folder.appendingPathComponent("queue.jsonl") }
    var rejectedFile: URL { folder.appendingPathComponent("rejected.jsonl") }
    private var fd: Int32 = -1
    /// Lines appended since the last rewrite.
    private(set) var lines = 0

    init(folder: URL) {
        self.folder = folder
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Reads the journal (none: empty), rewrites it compacted and opens it for appending.
    func open() throws -> Contents {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = Self.read((try? Data(contentsOf: file)) ?? Data())
        try rewrite(contents)
        return contents
    }

    /// Replays journal lines.
    static func read(_ data: Data) -> Contents {
        var order: [String] = []
        var listens: [String: QueuedListen] = [:]
        var sending = Set<String>()
        var out = Contents()
        let decoder = JSONDecoder()
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard let line = try? decoder.decode(Line.self, from: Data(raw)) else {
                out.skipped += 1
                continue
            }
            if let add = line.add, listens[add.id] == nil {
                order.append(add.id)
                listens[add.id] = add
            }
            for id in line.sending ?? [] { sending.insert(id) }
            for id in line.unsent ?? [] { sending.remove(id) }
            for id in (line.done ?? []) + (line.aside ?? []) { listens[id] = nil }
        }
        out.pending = order.compactMap { listens[$0] }
        out.uncertain = sending.filter { listens[$0] != nil }
        return out
    }

    func add(_ listen: QueuedListen) throws { try append(Line(add: listen)) }
    func sending(_ ids: [String]) throws { try append(Line(sending: ids)) }
    func done(_ ids: [String]) throws { try append(Line(done: ids)) }
    func unsent(_ ids: [String]) throws { try append(Line(unsent: ids)) }

    /// Keeps a refused listen in rejected.jsonl, then drops it from the queue.
    func setAside(_ listen: QueuedListen, reason: String, at date: Date = Date()) throws {
        struct Rejected: Codable {
            var listen: QueuedListen
            var reason: String
            var date: Date
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try Self.appendSynced(try encoder.encode(Rejected(listen: listen, reason: reason, date: date)) + Data("\n".utf8), to: rejectedFile)
        try append(Line(aside: [listen.id]))
    }

    /// Rewrites the journal with only `contents` (pending listens, and "sending" for the uncertain ones).
    func rewrite(_ contents: Contents) throws {
        var data = Data()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for listen in contents.pending { data += try encoder.encode(Line(add: listen)) + Data("\n".utf8) }
        let uncertain = contents.pending.map(\.id).filter { contents.uncertain.contains($0) }
        if !uncertain.isEmpty { data += try encoder.encode(Line(sending: uncertain)) + Data("\n".utf8) }
        let temporary = folder.appendingPathComponent(".queue.jsonl.tmp")
        try? FileManager.default.removeItem(at: temporary)
        try Self.appendSynced(data, to: temporary)
        if fd >= 0 { close(fd); fd = -1 }
        guard rename(temporary.path, file.path) == 0 else { throw Self.failure("cannot replace", file) }
        let dir = Foundation.open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
        fd = Foundation.open(file.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("cannot open", file) }
        lines = 0
    }

    private func append(_ line: Line) throws {
        guard fd >= 0 else { throw Self.failure("not open:", file) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try Self.write(try encoder.encode(line) + Data("\n".utf8), to: fd, file)
        lines += 1
    }

    /// Appends `data` to `url` (created if need be) and fsyncs it.
    static func appendSynced(_ data: Data, to url: URL) throws {
        let fd = Foundation.open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot open", url) }
        defer { close(fd) }
        try write(data, to: fd, url)
    }

    /// One write of the whole line (O_APPEND keeps it in one piece), then fsync.
    private static func write(_ data: Data, to fd: Int32, _ url: URL) throws {
        var done = 0
        while done < data.count {
            let n = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + done, data.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw failure("cannot write", url) }
            done += n
        }
        guard fsync(fd) == 0 else { throw failure("cannot sync", url) }
    }

    private static func failure(_ what: String, _ url: URL) -> Error {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(what) \(url.path): \(String(cString: strerror(errno)))"])
    }
}

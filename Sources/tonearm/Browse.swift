import ArgumentParser
import DBus

/// A thin typed wrapper over the daemon's `org.tonearm.Browser1` interface.
struct BrowserClient: Sendable {
    static let interface = "org.tonearm.Browser1"

    let connection: DBusConnection

    /// Connects and checks that the daemon owns its name (without starting it): exit code 3 otherwise.
    static func connectToRunningDaemon() async throws -> BrowserClient {
        BrowserClient(connection: try await PlayerClient.connectToRunningDaemon().connection)
    }

    /// (id, title) of every root.
    func roots() async throws -> [(id: String, title: String)] {
        let reply = try await call("Roots")
        guard let items = reply.first?.arrayValue else { throw unexpected("Roots", reply) }
        return items.compactMap { item in
            guard case .structure(let fields) = item.unwrapped, fields.count >= 2,
                  let id = fields[0].looseString, let title = fields[1].looseString
            else { return nil }
            return (id, title)
        }
    }

    /// The entries of the folder at `path` under `root`, in the daemon's order.
    func list(root: String, path: String) async throws -> [BrowseEntry] {
        let reply = try await call("List", [.string(root), .string(path)])
        guard let items = reply.first?.arrayValue else { throw unexpected("List", reply) }
        return items.compactMap { $0.unwrapped.vardictValue }.map(BrowseEntry.init)
    }

    /// Remembers the file at `path` as the root's last choice.
    func choose(root: String, path: String) async throws {
        _ = try await call("Choose", [.string(root), .string(path)])
    }

    /// Plays the file at `path` now (replacing the queue) and remembers it.
    func play(root: String, path: String) async throws {
        _ = try await call("Play", [.string(root), .string(path)])
    }

    /// Where a browser of `root` reopens.
    func resume(root: String) async throws -> BrowsePlace {
        let reply = try await call("Resume", [.string(root)])
        guard reply.count == 3, let folder = reply[0].looseString, let steps = reply[1].arrayValue,
              let selected = reply[2].looseString else { throw unexpected("Resume", reply) }
        let trail = steps.compactMap { step -> (name: String, path: String)? in
            guard case .structure(let fields) = step.unwrapped, fields.count >= 2,
                  let name = fields[0].looseString, let path = fields[1].looseString else { return nil }
            return (name, path)
        }
        return BrowsePlace(folder: folder, trail: trail, selected: selected.isEmpty ? nil : selected)
    }

    private func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(
            destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
            member: member, arguments: arguments)
    }

    private func unexpected(_ what: String, _ reply: [DBusValue]) -> CLIFailure {
        .refused("unexpected reply from \(what): \(reply.map(\.signature).joined(separator: ", "))")
    }
}

/// Where a browser reopens (`Resume`).
struct BrowsePlace: Sendable {
    var folder: String
    var trail: [(name: String, path: String)]
    var selected: String?
}

/// One entry of `List`.
struct BrowseEntry: Sendable {
    static let knownKeys: Set<String> = ["name", "path", "folder", "uri", "title", "artist", "album", "duration"]

    var name: String
    var path: String
    var folder: Bool
    var uri: String?
    var title: String?
    var artist: String?
    var album: String?
    /// Seconds.
    var duration: Double?
    /// Source-specific keys, as sent.
    var extra: [String: DBusValue]

    init(_ d: [String: DBusValue]) {
        name = d["name"]?.looseString ?? ""
        path = d["path"]?.looseString ?? name
        folder = d["folder"]?.looseBool ?? false
        uri = d["uri"]?.looseString
        title = d["title"]?.looseString
        artist = d["artist"]?.looseString
        album = d["album"]?.looseString
        duration = d["duration"]?.looseDouble
        extra = d.filter { !Self.knownKeys.contains($0.key) }
    }
}

/// `tonearm browse [ROOT] [PATH]`: the folders of the library (and other sources) on `org.tonearm.Browser1`.
struct Browse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "List a folder of the library (or another browsable source).",
        discussion: """
            Without ROOT, lists the roots ("library", …) with their titles. With ROOT, lists the \
            folder PATH under it (relative to the root; default: the root itself): folders first, \
            with a trailing /, then files with their title, artist and time; natural, \
            case-insensitive order; hidden entries left out. A PATH with "..", an absolute PATH or \
            one leading outside the root through a symbolic link is refused (exit code 1).

            --json prints an array of objects: without ROOT with the keys root and title; else with \
            the keys name, path, folder, uri, title, artist, album, duration (seconds), null when \
            unknown, plus whatever else the source tells (e.g. trackNumber).
            """
    )

    @Argument(help: ArgumentHelp("The root to browse (see `tonearm browse`).", valueName: "root"))
    var root: String?

    @Argument(help: ArgumentHelp("A folder relative to the root.", valueName: "path"))
    var path: String = ""

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await BrowserClient.connectToRunningDaemon()
        guard let root else {
            let roots = try await client.roots()
            if output.json {
                Output.line(JSONValue.array(roots.map { .object([("root", .string($0.id)), ("title", .string($0.title))]) }).serialized)
                return
            }
            if roots.isEmpty {
                Output.error("nothing to browse")
                return
            }
            Output.out(TextTable(alignments: [.left, .left], rows: roots.map { [$0.id + "/", $0.title] }).rendered)
            return
        }
        let entries = try await client.list(root: root, path: path)
        if output.json {
            Output.line(JSONValue.array(entries.map(Self.json)).serialized)
            return
        }
        if entries.isEmpty {
            Output.error("(empty folder)")
            return
        }
        Output.out(TextTable(alignments: [.left, .left, .right], rows: entries.map(Self.row)).rendered)
    }

    /// A folder: ["Name/"]; a file: ["name.flac", "Artist — Title", "4:56"].
    static func row(_ e: BrowseEntry) -> [String] {
        if e.folder { return [e.name + "/", "", ""] }
        var what = e.title ?? ""
        if let artist = e.artist, !artist.isEmpty { what = artist + " — " + what }
        return [e.name, what, e.duration.map { LibraryFormat.duration($0) } ?? ""]
    }

    static func json(_ e: BrowseEntry) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(e.name)),
            ("path", .string(e.path)),
            ("folder", .bool(e.folder)),
            ("uri", .string(e.uri)),
            ("title", .string(e.title)),
            ("artist", .string(e.artist)),
            ("album", .string(e.album)),
            ("duration", .number(e.duration)),
        ]
        for key in e.extra.keys.sorted() { members.append((key, json(e.extra[key]!))) }
        return .object(members)
    }

    static func json(_ value: DBusValue) -> JSONValue {
        let v = value.unwrapped
        switch v {
        case .bool(let b): return .bool(b)
        case .double(let x): return .number(x)
        case .string(let s), .objectPath(let s), .signature(let s): return .string(s)
        case .array(_, let items): return .array(items.map(json))
        default:
            if let n = v.int64Value { return .integer(n) }
            return .null
        }
    }
}

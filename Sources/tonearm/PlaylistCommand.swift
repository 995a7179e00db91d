import ArgumentParser
import DBus

/// A thin typed wrapper over the daemon's `org.tonearm.Playlists1` interface.
struct PlaylistsClient: Sendable {
    static let interface = "org.tonearm.Playlists1"
    let player: PlayerClient

    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await player.connection.call(destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
                                         member: member, arguments: arguments)
    }

    /// Fields of each structure in the first reply value.
    func rows(_ reply: [DBusValue]) -> [[DBusValue]] {
        (reply.first?.arrayValue ?? []).compactMap { item in
            if case .structure(let fields) = item.unwrapped { return fields }
            return nil
        }
    }
}

/// `tonearm playlist …`: saved playlists (M3U8 in $XDG_DATA_HOME/tonearm/playlists) and those in the music folders.
struct Playlist: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Save the queue as a playlist, list, show, load and remove playlists.",
        discussion: """
            Playlists are saved as M3U8 files in $XDG_DATA_HOME/tonearm/playlists/; smart playlists are \
            NAME.smart rules files there (see the README), whose tracks the library selects each time they are \
            read; playlist files (M3U, M3U8, PLS, XSPF) in the music folders are listed too and can be loaded, \
            but never removed. A playlist is named by its name or its id (/org/tonearm/playlist/…).
            """,
        subcommands: [PlaylistList.self, PlaylistShow.self, PlaylistSave.self, PlaylistLoad.self, PlaylistRemove.self],
        defaultSubcommand: PlaylistList.self
    )

    static func client() async throws -> PlaylistsClient {
        let player = try PlayerClient.connect()
        guard try await player.isDaemonRunning() else { throw CLIFailure.unreachable("the Tonearm daemon is not running") }
        return PlaylistsClient(player: player)
    }
}

struct PlaylistList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the playlists.",
        discussion: "--json prints [{\"id\", \"name\", \"uri\", \"saved\", \"smart\"}].")

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await Playlist.client()
        let rows = client.rows(try await client.call("List"))
        if output.json {
            Output.line(JSONValue.array(rows.map { f in
                .object([("id", .string(f[0].stringValue)), ("name", .string(f[1].stringValue)), ("uri", .string(f[2].stringValue)),
                         ("saved", .bool(f[3].boolValue ?? false)), ("smart", .bool(Self.isSmart(f)))])
            }).serialized)
            return
        }
        if rows.isEmpty { return Output.error("(no playlists: `tonearm playlist save NAME` saves the queue)") }
        Output.out(TextTable(alignments: [.left, .left], rows: rows.map { f in
            [f[1].stringValue ?? "", Self.isSmart(f) ? "smart" : (f[3].boolValue ?? false) ? "saved" : (f[2].stringValue ?? "")]
        }).rendered)
    }

    /// A smart playlist is a saved `.smart` rules file.
    static func isSmart(_ f: [DBusValue]) -> Bool { (f[3].boolValue ?? false) && (f[2].stringValue ?? "").hasSuffix(".smart") }
}

struct PlaylistShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a playlist's entries.",
        discussion: "--json prints [{\"uri\", \"title\", \"length\"}] (length in seconds, null when unknown).")

    @Argument(help: "The playlist's name or id.") var name: String
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await Playlist.client()
        let rows = client.rows(try await client.call("Show", [.string(name)]))
        if output.json {
            Output.line(JSONValue.array(rows.map { f in
                let seconds = f[2].int64Value ?? -1
                return .object([("uri", .string(f[0].stringValue)), ("title", .string(f[1].stringValue)),
                                ("length", .number(seconds >= 0 ? Double(seconds) : nil))])
            }).serialized)
            return
        }
        Output.out(TextTable(alignments: [.right, .left, .right], rows: rows.enumerated().map { i, f in
            let seconds = f[2].int64Value ?? -1
            let title = f[1].stringValue ?? ""
            return ["\(i + 1)", title.isEmpty ? (f[0].stringValue ?? "") : title, LibraryFormat.duration(seconds >= 0 ? Double(seconds) : nil)]
        }).rendered)
    }
}

struct PlaylistSave: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save", abstract: "Save the queue as a playlist (replacing a saved one of that name).")

    @Argument(help: "The playlist's name.") var name: String
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await Playlist.client()
        let id = try await client.call("Save", [.string(name)]).first?.stringValue ?? ""
        if output.json { Output.line(JSONValue.object([("id", .string(id)), ("name", .string(name))]).serialized) }
    }
}

struct PlaylistLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load", abstract: "Put a playlist in the queue.",
        discussion: "Replaces the queue (paused) unless --play (replace and play) or --enqueue (append).")

    @Argument(help: "The playlist's name or id.") var name: String
    @Flag(help: "Replace the queue and play.") var play = false
    @Flag(help: "Append to the queue.") var enqueue = false
    @OptionGroup var output: JSONOption

    func validate() throws {
        if play && enqueue { throw ValidationError("--play and --enqueue do not go together") }
    }

    func run() async throws {
        let client = try await Playlist.client()
        let mode = play ? "play" : enqueue ? "enqueue" : "replace"
        let ids = try await client.call("Load", [.string(name), .string(mode)]).first?.arrayValue?.compactMap(\.stringValue) ?? []
        if output.json { try await Queue.report(client.player, true) } else { Output.error("\(ids.count) track(s) queued") }
    }
}

struct PlaylistRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a saved playlist.")

    @Argument(help: "The saved playlist's name.") var name: String

    func run() async throws {
        let client = try await Playlist.client()
        _ = try await client.call("Remove", [.string(name)])
    }
}

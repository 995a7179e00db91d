import ArgumentParser
import DBus

/// `tonearm queue …`: the play queue (MPRIS TrackList and org.tonearm.Player1).
struct Queue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Show and edit the play queue.",
        discussion: """
            Tracks are named by their position in `queue list` (1 is the first) or by their track \
            id (/org/tonearm/track/N). Every subcommand takes --json and then prints the queue as \
            `queue list --json` does.
            """,
        subcommands: [QueueList.self, QueueAdd.self, QueueInsert.self, QueueMove.self, QueueRemove.self, QueueClear.self,
                      QueueShuffle.self, QueueLoop.self, QueueGoTo.self],
        defaultSubcommand: QueueList.self
    )

    /// The queue, with the current track marked.
    static func entries(_ client: PlayerClient) async throws -> (ids: [String], tracks: [TrackMetadata], current: String?) {
        let ids = try await client.trackIds()
        let tracks = try await client.tracksMetadata(ids)
        return (ids, tracks, try await client.metadata().trackId)
    }

    static func json(_ client: PlayerClient) async throws -> JSONValue {
        let (ids, tracks, current) = try await entries(client)
        let state = try await client.state()
        return .object([
            ("current", .string(current)),
            ("loop", .string(state.loop)),
            ("shuffle", .bool(state.shuffle)),
            ("tracks", .array(zip(ids, tracks).enumerated().map { index, pair in
                .object([
                    ("position", .integer(Int64(index + 1))),
                    ("trackId", .string(pair.0)),
                    ("title", .string(pair.1.displayTitle)),
                    ("artists", .array(pair.1.artists.map(JSONValue.string))),
                    ("album", .string(pair.1.album)),
                    ("url", .string(pair.1.url)),
                    ("length", .number(pair.1.length.map(Status.seconds))),
                    ("current", .bool(pair.0 == current)),
                ])
            })),
        ])
    }

    /// The track id for "3" (a position) or "/org/tonearm/track/7".
    static func resolve(_ reference: String, in ids: [String]) throws -> String {
        if reference.hasPrefix("/") {
            guard ids.contains(reference) else { throw CLIFailure.refused("no track \(reference) in the queue") }
            return reference
        }
        guard let n = Int(reference), n >= 1 else {
            throw CLIFailure.badArgument("'\(reference)' is not a queue position (1, 2, …) or a track id")
        }
        guard n <= ids.count else { throw CLIFailure.refused("the queue has \(ids.count) track(s); there is no \(n)") }
        return ids[n - 1]
    }

    /// Prints the queue as JSON when asked to.
    static func report(_ client: PlayerClient, _ json: Bool) async throws {
        if json { Output.line(try await Self.json(client).serialized) }
    }
}

struct QueueList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the queue (▶ marks the current track).",
        discussion: """
            --json prints {"current", "loop", "shuffle", "tracks": [{"position", "trackId", "title", \
            "artists", "album", "url", "length", "current"}]}.
            """
    )

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if output.json { return try await Queue.report(client, true) }
        let (ids, tracks, current) = try await Queue.entries(client)
        if ids.isEmpty {
            Output.error("(the queue is empty)")
            return
        }
        let rows = zip(ids, tracks).enumerated().map { index, pair in
            [pair.0 == current ? Style.accent("▶") : "", "\(index + 1)", pair.1.displayName ?? "", LibraryFormat.duration(pair.1.length.map(Status.seconds))]
        }
        Output.out(TextTable(alignments: [.left, .right, .left, .right], rows: rows).rendered)
    }
}

struct QueueAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Append files or URIs to the queue.")

    @OptionGroup var items: QueueItems

    func run() async throws { try await items.send(next: false) }
}

struct QueueInsert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "insert", abstract: "Insert files or URIs right after the current track.")

    @OptionGroup var items: QueueItems

    func run() async throws { try await items.send(next: true) }
}

/// What `queue add` and `queue insert` take, and how they hand it over (starting the daemon when needed).
struct QueueItems: ParsableArguments {
    @Argument(help: ArgumentHelp("Files or URIs.", valueName: "file-or-uri"))
    var items: [String]

    @OptionGroup var output: JSONOption

    func send(next: Bool) async throws {
        let uris = try MediaLocation.uris(for: items)
        let client = try PlayerClient.connect()
        try await client.ensureDaemonRunning()
        if next { try await client.enqueueNext(uris) } else { try await client.enqueue(uris) }
        try await Queue.report(client, output.json)
    }
}

struct QueueMove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move a track to another position.",
        discussion: "`queue move 5 1` makes the fifth track the first; `queue move 1 3` puts the first third."
    )

    @Argument(help: "The track (position or id).") var track: String
    @Argument(help: "Its new position (1 is the first).") var to: Int
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let ids = try await client.trackIds()
        let id = try Queue.resolve(track, in: ids)
        guard to >= 1, to <= ids.count else { throw CLIFailure.badArgument("the new position must be 1…\(ids.count)") }
        let others = ids.filter { $0 != id }
        try await client.moveTrack(id, after: to == 1 ? PlayerClient.noTrack : others[to - 2])
        try await Queue.report(client, output.json)
    }
}

struct QueueRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove tracks from the queue.")

    @Argument(help: "Tracks (positions or ids).") var tracks: [String]
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let ids = try await client.trackIds()
        let doomed = try tracks.map { try Queue.resolve($0, in: ids) }
        for id in Set(doomed) { try await client.removeTrack(id) }
        try await Queue.report(client, output.json)
    }
}

struct QueueClear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Empty the queue and stop.")

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.clearQueue()
        try await Queue.report(client, output.json)
    }
}

struct QueueShuffle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "shuffle", abstract: "Turn shuffle on, off, or toggle it (the default).")

    enum Setting: String, ExpressibleByArgument, CaseIterable { case on, off, toggle }

    @Argument(help: "on, off or toggle.") var setting: Setting = .toggle
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let now = try await client.state().shuffle
        let wanted = setting == .toggle ? !now : setting == .on
        try await client.setPlayerProperty("Shuffle", .bool(wanted))
        if output.json { try await Queue.report(client, true) } else { Output.line("shuffle \(wanted ? "on" : "off")") }
    }
}

struct QueueLoop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "loop", abstract: "Repeat nothing, the current track, or the whole queue.")

    enum Setting: String, ExpressibleByArgument, CaseIterable { case none, track, queue }

    @Argument(help: "none, track or queue.") var setting: Setting
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let value = ["none": "None", "track": "Track", "queue": "Playlist"][setting.rawValue]!
        try await client.setPlayerProperty("LoopStatus", .string(value))
        if output.json { try await Queue.report(client, true) } else { Output.line("loop \(setting.rawValue)") }
    }
}

struct QueueGoTo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "goto", abstract: "Play a track of the queue now.")

    @Argument(help: "The track (position or id).") var track: String
    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.goTo(try Queue.resolve(track, in: try await client.trackIds()))
        try await Queue.report(client, output.json)
    }
}

import ArgumentParser

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what is playing.",
        discussion: """
            Prints the playback status, the current track, position, volume, loop and shuffle. \
            --json prints one JSON object instead, with the keys status, trackId, title, \
            artists, album, url, artUrl, position and length (seconds), volume (0–1), loop \
            and shuffle.

            --follow keeps running and shows a live line (on a terminal) or one line per \
            tick (otherwise; with --json one object per tick) until Ctrl-C or until the \
            daemon leaves the bus.
            """
    )

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    @Flag(name: [.short, .long], help: "Keep following playback live.")
    var follow = false

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if follow {
            try await StatusFollower(client: client, json: json).run()
            return
        }
        let state = try await client.state()
        Output.out(json ? Self.json(state).serialized + "\n" : Self.text(state))
    }

    /// The `status --json` object.
    static func json(_ state: PlayerState) -> JSONValue {
        let metadata = state.metadata
        return .object([
            ("status", .string(state.status)),
            ("trackId", .string(metadata.trackId)),
            ("title", .string(metadata.title)),
            ("artists", .array(metadata.artists.map(JSONValue.string))),
            ("album", .string(metadata.album)),
            ("url", .string(metadata.url)),
            ("artUrl", .string(metadata.artUrl)),
            ("position", .number(seconds(state.position))),
            ("length", .number(metadata.length.map(seconds))),
            ("volume", .number(state.volume)),
            ("loop", .string(state.loop)),
            ("shuffle", .bool(state.shuffle)),
            ("buffering", .number(Double(state.buffering))),
        ])
    }

    /// The plain `status` text: one `key: value` line each.
    static func text(_ state: PlayerState) -> String {
        let metadata = state.metadata
        var lines: [(String, String)] = [("status", Style.status(state.status))]
        if let title = metadata.displayTitle { lines.append(("title", title)) }
        if !metadata.artists.isEmpty { lines.append(("artist", metadata.artists.joined(separator: ", "))) }
        if let album = metadata.album, !album.isEmpty { lines.append(("album", album)) }
        let length = metadata.length.map { TimeText.format(microseconds: $0) } ?? "--:--"
        lines.append(("position", "\(TimeText.format(microseconds: state.position)) / \(length)"))
        lines.append(("volume", Volume.format(state.volume)))
        lines.append(("loop", state.loop))
        lines.append(("shuffle", state.shuffle ? "on" : "off"))
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { key, value in
            "\(key):" + String(repeating: " ", count: width - key.count + 1) + value + "\n"
        }.joined()
    }

    static func seconds(_ microseconds: Int64) -> Double {
        Double(microseconds) / 1_000_000
    }
}

import ArgumentParser

/// `tonearm lyrics`: the current track's lyrics, printed or followed live.
struct LyricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lyrics",
        abstract: "Show the current track's lyrics, or follow them live.",
        discussion: """
            Prints the lyrics the daemon found for the current track (a MIDI file's own words, a .lrc file \
            beside the track, an ID3v2 SYLT frame, or a lyrics tag), timed lines with their start \
            ([m:ss.cc]); the line being sung is marked with ▶. --json prints one object: trackId, title, \
            source, synced, current (index or -1) and lines (start in seconds or null, text, words).

            --follow keeps running: on a terminal a full-screen view with the line being sung highlighted \
            and a few lines around it (q quits); otherwise one line per line change ([m:ss.cc] text, or with \
            --json one object: trackId, index, start, text) until Ctrl-C or until the daemon leaves the bus.
            """
    )

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Flag(name: [.short, .long], help: "Follow the line being sung live.")
    var follow = false

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if follow {
            try await LyricsFollower(client: client, json: json).run()
            return
        }
        let info = try await client.lyrics()
        let metadata = try await client.metadata()
        if json {
            Output.line(Self.json(info, metadata).serialized)
            return
        }
        guard !info.lines.isEmpty else {
            Output.error("no lyrics for \(metadata.displayName ?? "the current track")")
            return
        }
        Output.out(Self.text(info))
    }

    /// One line each: `[m:ss.cc] text` when timed; the line being sung marked `▶`.
    static func text(_ info: LyricsInfo) -> String {
        info.lines.enumerated().map { index, line in
            let mark = info.synced ? (index == info.current ? "▶ " : "  ") : ""
            let time = line.start.map { "[\(Self.stamp($0))] " } ?? ""
            let text = index == info.current ? Style.bold(line.text) : line.text
            return mark + Style.dim(time) + text + "\n"
        }.joined()
    }

    static func json(_ info: LyricsInfo, _ metadata: TrackMetadata) -> JSONValue {
        .object([
            ("trackId", .string(metadata.trackId)),
            ("title", .string(metadata.displayName)),
            ("source", info.source.isEmpty ? .null : .string(info.source)),
            ("synced", .bool(info.synced)),
            ("current", .integer(Int64(info.current))),
            ("lines", .array(info.lines.map { line in
                .object([
                    ("start", .number(line.start.map(Status.seconds))),
                    ("text", .string(line.text)),
                    ("words", .array(line.words.map { .object([("start", .number(Status.seconds($0.start))), ("text", .string($0.text))]) })),
                ])
            })),
        ])
    }

    /// `m:ss.cc`.
    static func stamp(_ microseconds: Int64) -> String {
        let centiseconds = max(0, microseconds) / 10_000
        let fraction = centiseconds % 100
        return TimeText.format(microseconds: microseconds) + "." + (fraction < 10 ? "0" : "") + String(fraction)
    }
}

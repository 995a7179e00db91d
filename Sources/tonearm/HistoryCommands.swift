import ArgumentParser
import DBus
import Foundation

/// `tonearm rate [STARS]`: rates the current track, or shows its rating and counts.
struct Rate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate",
        abstract: "Rate the current track (0 to 5 stars, halves allowed), or show what is known of it.",
        discussion: """
            With STARS (0, 0.5, … 5) the current track gets that rating; `--clear` removes it. Without, prints \
            its rating, plays, skips and when it was first and last played. Ratings and counts are kept in the \
            library index by the file's content, so a moved or renamed file keeps them.
            """
    )

    @Argument(help: "Stars, 0 to 5 in halves.")
    var stars: Double?

    @Flag(help: "Remove the rating.")
    var clear = false

    @OptionGroup var output: JSONOption

    func validate() throws {
        if let stars, !(stars >= 0 && stars <= 5 && (stars * 2).rounded() == stars * 2) {
            throw ValidationError("a rating is 0 to 5 stars in halves (0, 0.5, 1, … 5), not \(stars)")
        }
        if clear, stars != nil { throw ValidationError("give STARS or --clear, not both") }
    }

    func run() async throws {
        let client = try await LibraryClient.connectToRunningDaemon()
        if clear { try await client.setRating(uri: "", stars: -1) } else if let stars { try await client.setRating(uri: "", stars: stars) }
        let stats = try await client.trackStats(uri: "")
        if output.json {
            Output.line(JSONValue.object([
                ("rating", .number(stats["rating"]?.doubleValue)), ("plays", .integer(stats["playCount"]?.int64Value)),
                ("skips", .integer(stats["skipCount"]?.int64Value)), ("firstPlayed", .integer(stats["firstPlayed"]?.int64Value)),
                ("lastPlayed", .integer(stats["lastPlayed"]?.int64Value)),
            ]).serialized)
            return
        }
        let rating = stats["rating"]?.doubleValue.map { HistoryFormat.stars($0) } ?? "not rated"
        var line = "\(rating); played \(stats["playCount"]?.int64Value ?? 0), skipped \(stats["skipCount"]?.int64Value ?? 0)"
        if let last = stats["lastPlayed"]?.int64Value { line += "; last \(HistoryFormat.date(last))" }
        Output.line(line)
    }
}

/// `tonearm history`: the listens that counted, newest first.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List what was listened to, newest first.",
        discussion: """
            A listen counts once half the track or 4 minutes of it was heard (ListenBrainz's rule); seeking and \
            pausing do not break it, a live stream counts per song. One line per listen: when, artist — title, \
            album. --since takes a date (2026-11-01) or a date and time (2026-11-01T18:00); --json prints an \
            array of objects with uri, title, artists, album, startedAt (Unix seconds) and heard (seconds).
            """
    )

    @Option(help: "Only listens from this date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM, local time) on.")
    var since: String?

    @Option(help: "At most this many (default 100).")
    var limit: UInt32 = 100

    @OptionGroup var output: JSONOption

    func run() async throws {
        var from: Int64 = 0
        if let since {
            guard let date = HistoryFormat.parse(since) else {
                throw ValidationError("--since takes a date such as 2026-11-01 or 2026-11-01T18:00, not \(since)")
            }
            from = Int64(date.timeIntervalSince1970)
        }
        let listens = try await LibraryClient.connectToRunningDaemon().history(since: from, limit: limit)
        if output.json {
            Output.line(JSONValue.array(listens.map { l in
                .object([("uri", .string(l["uri"]?.stringValue)), ("title", .string(l["title"]?.stringValue)),
                         ("artists", .array((l["artists"]?.arrayValue ?? []).compactMap(\.stringValue).map(JSONValue.string))),
                         ("album", .string(l["album"]?.stringValue)), ("startedAt", .integer(l["startedAt"]?.int64Value)),
                         ("heard", .number(l["heard"]?.doubleValue))])
            }).serialized)
            return
        }
        if listens.isEmpty { Output.error("nothing listened to" + (since.map { " since \($0)" } ?? "")) }
        for l in listens {
            let artists = (l["artists"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            let title = l["title"]?.stringValue ?? l["uri"]?.stringValue ?? ""
            let album = l["album"]?.stringValue.map { "  (\($0))" } ?? ""
            Output.line("\(HistoryFormat.date(l["startedAt"]?.int64Value ?? 0))  \(artists.isEmpty ? "" : artists + " — ")\(title)\(album)")
        }
    }
}

enum HistoryFormat {
    /// "★★★½" style.
    static func stars(_ value: Double) -> String {
        let halves = Int((value * 2).rounded())
        return String(repeating: "★", count: halves / 2) + (halves % 2 == 1 ? "½" : "") + " (\(value) stars)"
    }

    static func date(_ seconds: Int64) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm"
        return f.string(from: Date(timeIntervalSince1970: Double(seconds)))
    }

    /// A local date or date and time.
    static func parse(_ text: String) -> Date? {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd"] {
            f.dateFormat = format
            if let date = f.date(from: text) { return date }
        }
        return nil
    }
}

/// `tonearm library top|recent|forgotten`: library tracks ranked by the listening history.
enum Ranked {
    static let top: any AsyncParsableCommand.Type = Top.self
    static let recent: any AsyncParsableCommand.Type = Recent.self
    static let forgotten: any AsyncParsableCommand.Type = Forgotten.self

    struct Options: ParsableArguments {
        @Option(help: "At most this many (default 20).")
        var limit: UInt32 = 20

        @OptionGroup var output: JSONOption

        func run(_ kind: String) async throws {
            let ranked = try await LibraryClient.connectToRunningDaemon().ranked(kind, limit: limit)
            if output.json {
                Output.line(JSONValue.array(ranked.map { track, fields in
                    guard case .object(var pairs) = LibraryFormat.json(track) else { return LibraryFormat.json(track) }
                    pairs += [("plays", .integer(fields["playCount"]?.unwrapped.int64Value)),
                              ("lastPlayed", .integer(fields["lastPlayed"]?.unwrapped.int64Value)),
                              ("rating", .number(fields["rating"]?.unwrapped.doubleValue))]
                    return .object(pairs)
                }).serialized)
                return
            }
            if ranked.isEmpty { Output.error("nothing yet: the history fills as you listen") }
            for (track, fields) in ranked {
                let plays = fields["playCount"]?.unwrapped.int64Value ?? 0
                let last = fields["lastPlayed"]?.unwrapped.int64Value.map(HistoryFormat.date) ?? "never"
                let rating = fields["rating"]?.unwrapped.doubleValue.map { " " + HistoryFormat.stars($0) } ?? ""
                Output.line("\(plays)×  \(last)  \(LibraryFormat.row(track).filter { !$0.isEmpty }.joined(separator: "  "))\(rating)")
            }
        }
    }

    struct Top: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "top", abstract: "The most played library tracks.",
            discussion: "One line per track: plays, last played, artist — title, album, time (and its rating). --json adds plays, lastPlayed and rating to the track keys.")
        @OptionGroup var options: Options
        func run() async throws { try await options.run("top") }
    }

    struct Recent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recent", abstract: "The library tracks played last.",
            discussion: "As `tonearm library top`, newest first.")
        @OptionGroup var options: Options
        func run() async throws { try await options.run("recent") }
    }

    struct Forgotten: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forgotten", abstract: "Tracks you played or rated well and have not heard for 90 days.",
            discussion: "As `tonearm library top`: best rated first, then most played, then longest unheard.")
        @OptionGroup var options: Options
        func run() async throws { try await options.run("forgotten") }
    }
}

/// `tonearm pick`: plays today's pick.
struct Pick: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pick",
        abstract: "Play today's pick: one track from the library, the same all day.",
        discussion: """
            The pick is never a track heard in the 30 days before today and favours what you rated well (an unrated \
            track counts as 2.5 stars). By default it plays now, replacing the queue; --enqueue appends it, --show \
            only prints it. --day YYYY-MM-DD shows another day's pick.
            """
    )

    @Flag(help: "Append it to the queue instead of playing it now.")
    var enqueue = false

    @Flag(help: "Only print it.")
    var show = false

    @Option(help: "Another day's pick (YYYY-MM-DD).")
    var day: String?

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await LibraryClient.connectToRunningDaemon()
        guard let track = try await client.todaysPick(day: day ?? "") else { throw CLIFailure.refused("the library is empty: nothing to pick") }
        if !show { _ = try await LibraryFormat.queue([track], enqueue ? .enqueue : .play, on: client) }
        if output.json {
            Output.line(LibraryFormat.json(track).serialized)
            return
        }
        let line = LibraryFormat.row(track).filter { !$0.isEmpty }.joined(separator: "  ")
        Output.line((show ? "" : enqueue ? "enqueued: " : "playing: ") + line)
    }
}

/// `tonearm continue [off|similar|playlist:NAME]`: whether the queue is kept from running dry, and how.
struct ContinueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Print or set what keeps the queue from running dry.",
        discussion: """
            similar: as the last track starts, a library track like the last ones heard (same artist, album artist, \
            genre or decade), not heard for a week, is added at the end, so it follows gaplessly. playlist:NAME: the \
            playlist's next track that is not in the queue is added instead (a smart playlist's, as its rules select \
            them then). off: the queue stops at its end. Lasts until the daemon restarts.
            """
    )

    @Argument(help: ArgumentHelp("off, similar or playlist:NAME.", valueName: "mode"))
    var mode: String?

    func validate() throws {
        if let mode, !["off", "similar"].contains(mode), !(mode.hasPrefix("playlist:") && mode.count > 9) {
            throw ValidationError("'\(mode)' is not a mode: use off, similar or playlist:NAME")
        }
    }

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if let mode { try await client.setTonearmProperty("Continue", .string(mode)) }
        Output.line(try await client.tonearmProperty("Continue").looseString ?? "?")
    }
}

import LibraryRecord
import ArgumentParser

/// `tonearm library …`: browse, search and rescan the daemon's music library
/// (`org.tonearm.Library1`).
struct Library: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library",
        abstract: "Browse, search and rescan the music library.",
        discussion: """
            Every subcommand asks the running daemon (it is not started for you) and takes \
            --json to print JSON instead of aligned text: arrays of objects, durations in \
            seconds as numbers with a decimal point, missing values as null.
            """,
        subcommands: [
            Artists.self, Albums.self, Tracks.self, Search.self, Random.self, Scan.self, Failures.self, Loudness.self,
            Ranked.top, Ranked.recent, Ranked.forgotten,
        ]
    )
}

// MARK: - Subcommands

extension Library {
    struct Artists: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "artists",
            abstract: "List the artists with their album and track counts.",
            discussion: """
                One line per artist: name, albums, tracks. --json prints an array of objects \
                with the keys name, albums and tracks.
                """
        )

        @OptionGroup var output: JSONOption

        func run() async throws {
            let artists = try await LibraryClient.connectToRunningDaemon().artists()
            if output.json {
                Output.line(JSONValue.array(artists.map(LibraryFormat.json)).serialized)
                return
            }
            if artists.isEmpty {
                Output.error("the library is empty (tonearm library scan indexes the music folders)")
                return
            }
            Output.out(TextTable(alignments: [.left, .right, .right], rows: artists.map { artist in
                [
                    LibraryFormat.name(artist.name, else: "Unknown Artist"),
                    LibraryFormat.count(artist.albums, "album"),
                    LibraryFormat.count(artist.tracks, "track"),
                ]
            }).rendered)
        }
    }

    struct Albums: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "albums",
            abstract: "List the albums, or those of one artist.",
            discussion: """
                One line per album: album artist — title (year), tracks, total time. With ARTIST, \
                only the albums where ARTIST is the album artist or plays on a track (case and \
                accents ignored). --json prints an array of objects with the keys title, \
                albumArtist, year, tracks, duration (seconds) and artUrl.
                """
        )

        @Argument(help: ArgumentHelp("Only this artist's albums.", valueName: "artist"))
        var artist: String?

        @OptionGroup var output: JSONOption

        func run() async throws {
            let albums = try await LibraryClient.connectToRunningDaemon().albums(artist: artist ?? "")
            if output.json {
                Output.line(JSONValue.array(albums.map(LibraryFormat.json)).serialized)
                return
            }
            if albums.isEmpty {
                Output.error(artist.map { "no albums by '\($0)'" } ?? "the library has no albums")
                return
            }
            Output.out(TextTable(alignments: [.left, .right, .right], rows: albums.map { album in
                [
                    LibraryFormat.albumName(album),
                    LibraryFormat.count(album.tracks, "track"),
                    LibraryFormat.duration(album.duration),
                ]
            }).rendered)
        }
    }

    struct Tracks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tracks",
            abstract: "List an album's tracks.",
            discussion: """
                Prints the album (album artist — title (year)) and then its tracks in disc and \
                track order: number, title, artist (when it is not the album artist), time. \
                Without --artist, ALBUM must name one album of the library (case ignored); \
                when several album artists have an album of that title, name one with --artist.

                --play replaces the queue with the album and plays it; --enqueue appends it. \
                --json prints an array of track objects with the keys path, uri, title, artist, \
                album, albumArtist, genre, year, trackNumber, discNumber, duration (seconds) and \
                artUrl.
                """
        )

        @Argument(help: ArgumentHelp("The album's title.", valueName: "album"))
        var album: String

        @Option(name: .long, help: ArgumentHelp("The album artist.", valueName: "artist"))
        var artist: String?

        @Flag
        var action: QueueAction?

        @OptionGroup var output: JSONOption

        func run() async throws {
            let client = try await LibraryClient.connectToRunningDaemon()
            let tracks = try await findTracks(client)
            var queued: Int?
            if let action { queued = try await LibraryFormat.queue(tracks, action, on: client) }
            if output.json {
                Output.line(JSONValue.array(tracks.map(LibraryFormat.json)).serialized)
                return
            }
            Output.out(LibraryFormat.albumListing(tracks))
            if let action, let queued { Output.line(action.report(queued)) }
        }

        /// The album's tracks; an album that is not there is an error (1), an ambiguous title a bad argument (2).
        func findTracks(_ client: LibraryClient) async throws -> [LibraryTrack] {
            if let artist {
                let tracks = try await client.albumTracks(album: album, albumArtist: artist)
                if tracks.isEmpty { throw CLIFailure.refused("no album '\(album)' by '\(artist)' in the library") }
                return tracks
            }
            // Find the album artist first, so that two albums of the same title never mix.
            let wanted = album.lowercased()
            let candidates = try await client.albums(artist: "").filter { ($0.title ?? "").lowercased() == wanted }
            var artists: [String] = []
            for candidate in candidates where !artists.contains(candidate.albumArtist ?? "") {
                artists.append(candidate.albumArtist ?? "")
            }
            if artists.count > 1 {
                let names = artists.map { $0.isEmpty ? "(no album artist)" : "'\($0)'" }.joined(separator: ", ")
                throw CLIFailure.badArgument(
                    "\(artists.count) albums are titled '\(album)', by \(names): choose one with --artist")
            }
            // No title matched exactly: let the daemon compare (it also ignores accents).
            let title = candidates.first?.title ?? album
            let tracks = try await client.albumTracks(album: title, albumArtist: artists.first ?? "")
            if tracks.isEmpty { throw CLIFailure.refused("no album '\(album)' in the library") }
            return tracks
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Find tracks.",
            discussion: """
                EXPR is one or more conditions joined by AND, e.g. "artist=Bill Evans AND \
                album~blue": FIELD=VALUE equals, FIELD~VALUE contains, FIELD^VALUE starts with; \
                case and accents are ignored. Fields: title, artist, album, albumArtist, genre, \
                year, path. The daemon checks EXPR: a bad one is exit code 1.

                Prints one line per track: artist — title, album (year), time; all matches unless \
                --limit is given. --play replaces the queue with the tracks found and plays the \
                first; --enqueue appends them. --json prints an array of track objects (keys as \
                in `tonearm library tracks --help`).
                """
        )

        @Argument(help: ArgumentHelp("The search expression.", valueName: "expr"))
        var expression: String

        @Option(name: .long, help: ArgumentHelp("Skip the first N matches.", valueName: "n"))
        var offset: UInt32 = 0

        @Option(name: .long, help: ArgumentHelp("Return at most N matches (default: all).", valueName: "n"))
        var limit: UInt32?

        @Flag
        var action: QueueAction?

        @OptionGroup var output: JSONOption

        func validate() throws {
            if limit == 0 { throw ValidationError("--limit must be at least 1 (leave it out for all matches)") }
        }

        func run() async throws {
            let client = try await LibraryClient.connectToRunningDaemon()
            let tracks: [LibraryTrack]
            if let limit {
                tracks = try await client.search(expression, offset: offset, limit: limit)
            } else {
                tracks = try await client.searchAll(expression, offset: offset)
            }
            var queued: Int?
            if let action { queued = try await LibraryFormat.queue(tracks, action, on: client) }
            if output.json {
                Output.line(JSONValue.array(tracks.map(LibraryFormat.json)).serialized)
                return
            }
            if tracks.isEmpty {
                Output.error(offset > 0 ? "no more tracks match" : "no tracks match")
                return
            }
            Output.out(TextTable(alignments: [.left, .left, .right], rows: tracks.map(LibraryFormat.row)).rendered)
            if let action, let queued { Output.line(action.report(queued)) }
            if let limit, tracks.count == Int(limit) {
                let (next, overflow) = offset.addingReportingOverflow(limit)
                if !overflow { Output.error("(more may match: --offset \(next))") }
            }
        }
    }

    struct Random: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "random",
            abstract: "Pick a track at random.",
            discussion: """
                Prints the pick: artist — title, album (year), time. --play plays it now \
                (replacing the queue); --enqueue appends it to the queue. --json prints an array \
                of one track object (keys as in `tonearm library tracks --help`), or [] when the \
                library is empty.
                """
        )

        @Flag
        var action: QueueAction?

        @OptionGroup var output: JSONOption

        func run() async throws {
            let client = try await LibraryClient.connectToRunningDaemon()
            guard let track = try await client.randomTrack() else {
                if action != nil { throw CLIFailure.refused("the library is empty: nothing to play") }
                if output.json { Output.line("[]") } else { Output.error("the library is empty") }
                return
            }
            if let action { _ = try await LibraryFormat.queue([track], action, on: client) }
            if output.json {
                Output.line(JSONValue.array([LibraryFormat.json(track)]).serialized)
                return
            }
            let line = LibraryFormat.row(track).filter { !$0.isEmpty }.joined(separator: "  ")
            switch action {
            case .play: Output.line("playing: " + line)
            case .enqueue: Output.line("enqueued: " + line)
            case nil: Output.line(line)
            }
        }
    }

    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan",
            abstract: "Rescan the music folders.",
            discussion: """
                Asks the daemon to rescan its folders and waits for the result: a progress bar on \
                a terminal, otherwise one "scanned DONE/TOTAL" line per progress report; then \
                "added N, updated N, removed N, failed N". --json prints only the result, as an \
                object with the keys added, updated, removed and failed.

                Exit code 3 when the daemon leaves before the scan is done; 130 on Ctrl-C (the \
                scan goes on in the daemon).
                """
        )

        @OptionGroup var output: JSONOption

        func run() async throws {
            let client = LibraryClient(connection: try PlayerClient.connect().connection)
            let summary = try await ScanWatcher(client: client, json: output.json).run()
            if output.json {
                Output.line(JSONValue.object([
                    ("added", .integer(Int64(summary.added))),
                    ("updated", .integer(Int64(summary.updated))),
                    ("removed", .integer(Int64(summary.removed))),
                    ("failed", .integer(Int64(summary.failed))),
                ]).serialized)
                return
            }
            Output.line(LibraryFormat.summary(summary))
            if summary.failed > 0 { Output.error("(tonearm library failures lists the files that could not be read)") }
        }
    }

    struct Failures: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "failures",
            abstract: "List the files the last scans could not read.",
            discussion: """
                One "path — reason" line per file. --json prints an array of objects with the \
                keys path and reason.
                """
        )

        @OptionGroup var output: JSONOption

        func run() async throws {
            let failures = try await LibraryClient.connectToRunningDaemon().failures()
            if output.json {
                Output.line(JSONValue.array(failures.map { failure in
                    .object([("path", .string(failure.path)), ("reason", .string(failure.reason))])
                }).serialized)
                return
            }
            if failures.isEmpty {
                Output.error("no failures")
                return
            }
            Output.out(failures.map { "\($0.path) — \($0.reason)\n" }.joined())
        }
    }
}

extension Library {
    struct Loudness: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "loudness",
            abstract: "Show how far the ReplayGain measurement has come, or write measured gains into the files.",
            discussion: """
                Files whose tags carry no ReplayGain are measured in the background after each scan (EBU R128 \
                integrated loudness and sample peak, album loudness per album) and the results are kept in the \
                library index only. With --write-tags the measured gains are written into the files as \
                REPLAYGAIN_TRACK_GAIN/_PEAK and REPLAYGAIN_ALBUM_GAIN/_PEAK tags (as loudgain writes them); \
                nothing is written otherwise. --json prints {"tagged", "measured", "pending", "failed", \
                "running"} (with --write-tags: {"written", "failures": [{"path", "reason"}]}).
                """
        )

        @Flag(name: .customLong("write-tags"), help: "Write the measured gains into the files' tags.")
        var writeTags = false

        @OptionGroup var output: JSONOption

        func run() async throws {
            let client = try await LibraryClient.connectToRunningDaemon()
            if writeTags {
                let report = try await client.writeLoudnessTags()
                if output.json {
                    Output.line(JSONValue.object([
                        ("written", .number(Double(report.written))),
                        ("failures", .array(report.failures.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })),
                    ]).serialized)
                    return
                }
                Output.line("wrote ReplayGain tags into \(report.written) file\(report.written == 1 ? "" : "s")")
                for failure in report.failures { Output.error("\(failure.path) — \(failure.reason)") }
                if !report.failures.isEmpty { throw CLIFailure.refused("\(report.failures.count) file(s) could not be tagged") }
                return
            }
            let s = try await client.loudnessStatus()
            if output.json {
                Output.line(JSONValue.object([
                    ("tagged", .number(Double(s.tagged))), ("measured", .number(Double(s.measured))),
                    ("pending", .number(Double(s.pending))), ("failed", .number(Double(s.failed))), ("running", .bool(s.running)),
                ]).serialized)
                return
            }
            Output.line("\(s.tagged) tagged, \(s.measured) measured, \(s.pending) waiting, \(s.failed) failed\(s.running ? " (measuring now)" : "")")
        }
    }
}

// MARK: - Shared options

struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}

/// `--play` / `--enqueue` (at most one).
enum QueueAction: String, EnumerableFlag {
    case play
    case enqueue

    static func help(for value: QueueAction) -> ArgumentHelp? {
        switch value {
        case .play: return "Play now: replace the queue with the track(s) and start the first."
        case .enqueue: return "Append the track(s) to the queue."
        }
    }

    /// "playing 12 tracks" / "enqueued 12 tracks".
    func report(_ count: Int) -> String {
        let tracks = count == 1 ? "1 track" : "\(count) tracks"
        switch self {
        case .play: return "playing \(tracks)"
        case .enqueue: return "enqueued \(tracks)"
        }
    }
}

// MARK: - Formatting

enum LibraryFormat {
    // JSON: the keys of org.tonearm.Library1, nulls for what the daemon left out.

    static func json(_ artist: LibraryArtist) -> JSONValue {
        .object([
            ("name", .string(artist.name)),
            ("albums", .integer(artist.albums)),
            ("tracks", .integer(artist.tracks)),
        ])
    }

    static func json(_ album: LibraryAlbum) -> JSONValue {
        .object([
            ("title", .string(album.title)),
            ("albumArtist", .string(album.albumArtist)),
            ("year", .integer(album.year)),
            ("tracks", .integer(album.tracks)),
            ("duration", .number(album.duration)),
            ("artUrl", .string(album.artUrl)),
        ])
    }

    static func json(_ track: LibraryTrack) -> JSONValue {
        .object([
            ("path", .string(track.path)),
            ("uri", .string(track.uri)),
            ("title", .string(track.title)),
            ("artist", .string(track.artist)),
            ("album", .string(track.album)),
            ("albumArtist", .string(track.albumArtist)),
            ("genre", .string(track.genre)),
            ("year", .integer(track.year.map(Int64.init))),
            ("trackNumber", .integer(track.trackNumber.map(Int64.init))),
            ("discNumber", .integer(track.discNumber.map(Int64.init))),
            ("duration", .number(track.duration)),
            ("artUrl", .string(track.artUrl)),
        ])
    }

    // Text.

    /// `name`, or `fallback` when it is missing or empty.
    static func name(_ name: String?, else fallback: String) -> String {
        guard let name, !name.isEmpty else { return fallback }
        return name
    }

    /// "1 track", "12 tracks", "? tracks".
    static func count(_ count: Int64?, _ noun: String) -> String {
        guard let count else { return "? \(noun)s" }
        return count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
    }

    /// "42:10", "1:02:03", or "--:--" when unknown.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
        return TimeText.format(microseconds: TimeText.microseconds(seconds.rounded()))
    }

    /// A track's length in seconds, nil when the library does not know it (0).
    static func known(_ seconds: Double) -> Double? { seconds > 0 ? seconds : nil }

    /// " (1962)", or "" when the year is unknown.
    static func yearSuffix(_ year: Int64?) -> String {
        guard let year, year > 0 else { return "" }
        return " (\(year))"
    }

    /// "Bill Evans — Waltz for Debby (1962)".
    static func albumName(_ album: LibraryAlbum) -> String {
        name(album.albumArtist, else: "Unknown Artist") + " — " + name(album.title, else: "Unknown Album")
            + yearSuffix(album.year)
    }

    /// The title, else the file name, else "Untitled".
    static func title(_ track: LibraryTrack) -> String {
        if !track.title.isEmpty { return track.title }
        if let last = track.path.split(separator: "/").last { return String(last) }
        return "Untitled"
    }

    /// The artist, else the album artist.
    static func artist(_ track: LibraryTrack) -> String {
        if !track.artist.isEmpty { return track.artist }
        return name(track.albumArtist, else: "Unknown Artist")
    }

    /// A search result: ["Artist — Title", "Album (1962)", "4:56"].
    static func row(_ track: LibraryTrack) -> [String] {
        let album = track.album.isEmpty ? "" : track.album + yearSuffix(track.year.map(Int64.init))
        return [artist(track) + " — " + title(track), album, duration(known(track.duration))]
    }

    /// An album's heading and its numbered tracks.
    static func albumListing(_ tracks: [LibraryTrack]) -> String {
        guard let first = tracks.first else { return "" }
        let albumArtist = name(first.albumArtist, else: artist(first))
        let total = tracks.map(\.duration).reduce(0, +)
        let knownTotal = tracks.allSatisfy { $0.duration > 0 }
        let heading = albumArtist + " — " + name(first.album, else: "Unknown Album") + yearSuffix(first.year.map(Int64.init))
            + "  " + count(Int64(tracks.count), "track") + "  " + duration(knownTotal ? total : nil)
        let severalDiscs = Set(tracks.map { $0.discNumber ?? 1 }).count > 1
        let rows = tracks.map { track -> [String] in
            var number = track.trackNumber.map { $0 < 10 && severalDiscs ? "0\($0)" : "\($0)" } ?? ""
            if severalDiscs, !number.isEmpty { number = "\(track.discNumber ?? 1)-" + number }
            let trackArtist = artist(track)
            return [number, title(track), trackArtist == albumArtist ? "" : trackArtist, duration(known(track.duration))]
        }
        return heading + "\n" + TextTable(alignments: [.right, .left, .left, .right], rows: rows).rendered
    }

    /// "added 12, updated 3, removed 1, failed 2".
    static func summary(_ summary: ScanSummary) -> String {
        "added \(summary.added), updated \(summary.updated), removed \(summary.removed), failed \(summary.failed)"
    }

    /// Replaces the queue with (and plays) or appends the tracks' URIs; returns how many were queued.
    /// An empty list is refused rather than sent (ReplaceQueue([]) would empty the queue).
    static func queue(_ tracks: [LibraryTrack], _ action: QueueAction, on client: LibraryClient) async throws -> Int {
        let uris = tracks.compactMap(\.playableURI)
        guard !uris.isEmpty else {
            throw CLIFailure.refused(tracks.isEmpty ? "nothing to queue: no tracks found" : "the tracks found have no URI")
        }
        if uris.count < tracks.count {
            Output.error("tonearm: skipping \(tracks.count - uris.count) track(s) without a URI")
        }
        switch action {
        case .play: try await client.player.replaceQueue(uris, play: true)
        case .enqueue: try await client.player.enqueue(uris)
        }
        return uris.count
    }
}

/// Text in aligned columns, two spaces apart; columns empty in every row are left out,
/// and lines carry no trailing spaces.
struct TextTable {
    enum Alignment { case left, right }

    var alignments: [Alignment]
    var rows: [[String]]

    var rendered: String {
        let columnCount = alignments.count
        let used = (0..<columnCount).filter { column in rows.contains { column < $0.count && !$0[column].isEmpty } }
        let widths = used.map { column in
            rows.map { column < $0.count ? TextWidth.of($0[column]) : 0 }.max() ?? 0
        }
        return rows.map { row in
            var line = ""
            for (index, column) in used.enumerated() {
                let cell = column < row.count ? row[column] : ""
                let padding = String(repeating: " ", count: widths[index] - TextWidth.of(cell))
                if index > 0 { line += "  " }
                line += alignments[column] == .left ? cell + padding : padding + cell
            }
            while line.last == " " { line.removeLast() }
            return line + "\n"
        }.joined()
    }
}

/// How many terminal columns text takes: East Asian wide characters and most emoji count
/// two, control characters none.
enum TextWidth {
    static func of(_ text: String) -> Int {
        var total = 0
        var inEscape = false
        for character in text {
            // Colour codes (ESC [ … m) take no room.
            if character == "\u{1B}" { inEscape = true; continue }
            if inEscape {
                if character.isLetter { inEscape = false }
                continue
            }
            total += width(of: character)
        }
        return total
    }

    static func width(of character: Character) -> Int {
        guard let value = character.unicodeScalars.first?.value else { return 0 }
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}

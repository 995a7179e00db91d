import ArgumentParser
import DBus

/// `tonearm midi …`: the MIDI folder on `org.tonearm.Browser1` (root "midi").
struct MIDI: AsyncParsableCommand {
    static let root = "midi"

    static let configuration = CommandConfiguration(
        commandName: "midi",
        abstract: "Browse and play Standard MIDI Files.",
        discussion: """
            The MIDI folder is [plugins.midi] folder in the config (default: MIDI inside the music \
            folder). Paths are relative to it; "..", absolute paths and links leading outside are \
            refused (exit code 1). Playing or choosing a file remembers it, and `midi resume` and \
            `midi browse` reopen there, even after the folder moved.
            """,
        subcommands: [MIDIList.self, MIDIPlay.self, MIDIResume.self, MIDIBrowse.self]
    )

    /// "Classical › Bach" for a trail (the root's title first).
    static func trailText(_ trail: [(name: String, path: String)]) -> String {
        trail.map(\.name).joined(separator: " › ")
    }

    /// What the list shows for a file: its title, what plays it, its length; or why it cannot play.
    static func row(_ e: BrowseEntry) -> [String] {
        if e.folder { return [e.name + "/", "", ""] }
        if let error = e.extra["error"]?.looseString { return [e.name, "✗ " + error, ""] }
        var about = e.title ?? ""
        if let instruments = e.extra["instruments"]?.looseStrings, !instruments.isEmpty {
            let shown = instruments.prefix(3).joined(separator: ", ") + (instruments.count > 3 ? ", …" : "")
            about += about.isEmpty ? shown : " (" + shown + ")"
        }
        if e.extra["lyrics"]?.looseBool == true { about += " ♪" }
        return [e.name, about, LibraryFormat.duration(e.duration)]
    }
}

struct MIDIList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a folder of MIDI files.",
        discussion: """
            Folders first (with a trailing /), then MIDI files (by extension or by content) with \
            their title, instruments (♪ when they have lyrics) and length; a file that cannot be \
            read says why. --json prints the entries as `tonearm browse midi PATH --json` does \
            (format, tracks, channels, instruments, lyrics, error, …).
            """
    )

    @Argument(help: ArgumentHelp("A folder relative to the MIDI folder.", valueName: "path"))
    var path: String = ""

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await BrowserClient.connectToRunningDaemon()
        let entries = try await client.list(root: MIDI.root, path: path)
        if output.json {
            Output.line(JSONValue.array(entries.map(Browse.json)).serialized)
            return
        }
        if entries.isEmpty {
            Output.error("(no folders or MIDI files here)")
            return
        }
        Output.out(TextTable(alignments: [.left, .left, .right], rows: entries.map(MIDI.row)).rendered)
    }
}

struct MIDIPlay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a MIDI file now (replacing the queue) and remember it.",
        discussion: "--json prints the file's entry (as `midi ls --json` shows it) once it plays."
    )

    @Argument(help: ArgumentHelp("A MIDI file relative to the MIDI folder.", valueName: "path"))
    var path: String

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await BrowserClient.connectToRunningDaemon()
        try await client.play(root: MIDI.root, path: path)
        let parts = path.split(separator: "/").map(String.init)
        let entry = try await client.list(root: MIDI.root, path: parts.dropLast().joined(separator: "/"))
            .first { $0.name == parts.last }
        if output.json {
            Output.line((entry.map(Browse.json) ?? .object([("path", .string(path))])).serialized)
        } else {
            Output.line("Playing \(entry?.title ?? path)")
        }
    }
}

struct MIDIResume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Show the last MIDI file chosen, and the folder it is in.",
        discussion: """
            Prints the folder trail and the file. When the file is gone, the nearest folder that \
            still exists, and no file. --json prints {"folder", "trail": [{"name", "path"}], \
            "selected"} (selected is null when there is no file to select).
            """
    )

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await BrowserClient.connectToRunningDaemon()
        let place = try await client.resume(root: MIDI.root)
        if output.json {
            Output.line(JSONValue.object([
                ("folder", .string(place.folder)),
                ("trail", .array(place.trail.map { .object([("name", .string($0.name)), ("path", .string($0.path))]) })),
                ("selected", .string(place.selected)),
            ]).serialized)
            return
        }
        Output.line(MIDI.trailText(place.trail))
        if let selected = place.selected {
            Output.line("  " + selected)
        } else {
            Output.error("(no file to select)")
        }
    }
}

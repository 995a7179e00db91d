import ArgumentParser
import DBus
import Foundation

/// A thin typed wrapper over the daemon's `org.tonearm.Shares1` interface.
struct SharesClient: Sendable {
    static let interface = "org.tonearm.Shares1"
    let player: PlayerClient
    var connection: DBusConnection { player.connection }

    /// Plays files now as one batch; returns the track ids and what was refused, with why.
    func open(_ uris: [String]) async throws -> (ids: [String], refused: [(uri: String, reason: String)]) {
        let reply = try await call("Open", [.stringArray(uris)])
        let ids = reply.first?.arrayValue?.compactMap(\.stringValue) ?? []
        let refused = (reply.count > 1 ? reply[1].arrayValue ?? [] : []).compactMap { item -> (String, String)? in
            guard case .structure(let f) = item.unwrapped, f.count == 2, let u = f[0].stringValue, let r = f[1].stringValue else { return nil }
            return (u, r)
        }
        return (ids, refused)
    }

    func export(_ what: String, folder: String, mode: String) async throws -> String {
        let reply = try await call("Export", [.string(what), .string(folder), .string(mode)])
        guard let id = reply.first?.stringValue else { throw CLIFailure.refused("unexpected reply from Export") }
        return id
    }

    func cancelExport(_ id: String) async throws {
        _ = try await call("CancelExport", [.string(id)])
    }

    /// Export signals, subscribed (and confirmed by the bus) before returning.
    func exportSignals() async throws -> AsyncStream<DBusSignal> {
        try await connection.subscribe(DBusMatchRule(sender: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface))
    }

    private func call(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
                                  member: member, arguments: arguments)
    }
}

/// `tonearm open FILE…`: what "Open with Tonearm" runs.
struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Play files now, as \"Open with Tonearm\" does.",
        discussion: """
            Hands the files to the daemon as one batch (starting it when it is not running): each is \
            checked by content; the playable ones go right after the current track and the first \
            plays. What cannot be played is reported with the reason (exit code 1 when nothing could \
            be). --json prints {"tracks": [ids], "refused": [{"uri", "reason"}]}.
            """
    )

    @Argument(help: ArgumentHelp("Files or URIs to play.", valueName: "file-or-uri"))
    var items: [String]

    @OptionGroup var output: JSONOption

    func validate() throws {
        if items.isEmpty { throw ValidationError("give at least one file to open") }
    }

    func run() async throws {
        let uris = try MediaLocation.uris(for: items)
        let player = try PlayerClient.connect()
        try await player.ensureDaemonRunning()
        let (ids, refused) = try await SharesClient(player: player).open(uris)
        if output.json {
            Output.line(JSONValue.object([
                ("tracks", .array(ids.map { .string($0) })),
                ("refused", .array(refused.map { .object([("uri", .string($0.uri)), ("reason", .string($0.reason))]) })),
            ]).serialized)
        } else {
            for r in refused { Output.error("not opened: \(r.reason)") }
        }
        if ids.isEmpty { throw CLIFailure.refused(refused.isEmpty ? "nothing to open" : "none of the files can be played") }
    }
}

/// `tonearm export WHAT FOLDER [--mode M]`.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a copy of a track into a folder, to send it on.",
        discussion: """
            WHAT is `current` (the track playing), a track id (/org/tonearm/track/N) or a file. \
            --mode passthrough (the default) copies the audio without re-encoding into the container \
            that fits it (.wav, .aiff, .mp3, .m4a, .ogg, .opus, .flac, .mid); m4a, ogg, opus, flac or mp3 \
            re-encode. Tags and cover art are carried over. Shows progress on a terminal; Ctrl-C cancels, \
            and a cancelled or failed export leaves no file. Prints the new file's path (--json: \
            {"path"}).
            """
    )

    @Argument(help: ArgumentHelp("current, a track id, or a file.", valueName: "what"))
    var what: String

    @Argument(help: ArgumentHelp("The folder to write into (default: the current folder).", valueName: "folder"))
    var folder: String = "."

    @Option(help: "passthrough, m4a, ogg, opus, flac or mp3.")
    var mode: String = "passthrough"

    @OptionGroup var output: JSONOption

    func run() async throws {
        let player = try await PlayerClient.connectToRunningDaemon()
        let shares = SharesClient(player: player)
        var source = what
        if what == "current" {
            guard let id = try await player.metadata().trackId, id != PlayerClient.noTrack else {
                throw CLIFailure.refused("nothing is playing")
            }
            source = id
        } else if !what.hasPrefix("/org/") {
            source = try MediaLocation.uris(for: [what])[0]
        }
        let cwd = FileManager.default.currentDirectoryPath
        let target = URL(fileURLWithPath: folder.hasPrefix("/") ? folder : cwd + "/" + folder).standardizedFileURL.path

        let signals = try await shares.exportSignals()
        let id = try await shares.export(source, folder: target, mode: mode)
        let interrupts = InterruptWatch { Task { try? await shares.cancelExport(id) } }
        defer { interrupts.cancel() }
        let live = Output.stdoutIsTerminal && !output.json
        defer { if live { Output.out("\r\u{1B}[2K") } }
        for await signal in signals where signal.arguments.first?.stringValue == id {
            switch signal.member {
            case "ExportProgress":
                guard live, let fraction = signal.arguments[1].doubleValue else { continue }
                Output.out("\r\u{1B}[2K" + ScanBar.render("exporting", fraction: fraction,
                                                         counts: "\(Int((fraction * 100).rounded(.down)))%",
                                                         columns: Output.terminalColumns ?? 80))
            case "ExportFinished":
                let args = signal.arguments.map { $0.stringValue ?? "" }
                if live { Output.out("\r\u{1B}[2K") }
                guard args.count == 4, args[2].isEmpty else {
                    let name = args.count > 2 ? args[2] : ""
                    throw CLIFailure(message: args.count > 3 ? args[3] : "the export failed", code: name.hasSuffix(".Cancelled") ? 130 : 1)
                }
                Output.line(output.json ? JSONValue.object([("path", .string(args[1]))]).serialized : args[1])
                return
            default:
                continue
            }
        }
        throw CLIFailure.unreachable("lost the connection to the session bus")
    }
}

import ArgumentParser
import DBus
import Glibc

/// `tonearm`: the command-line client of the Tonearm music player daemon.
@main
struct Tonearm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm",
        abstract: "Control the Tonearm music player over D-Bus.",
        discussion: """
            Talks to the running tonearmd on the session bus (\(PlayerClient.busName)); \
            `tonearm play` starts the daemon when it is not running.

            Exit codes: 0 done; 1 the daemon answered with an error; 2 a bad argument \
            (nothing was sent); 3 no session bus, or the daemon is not running or not answering.
            """,
        version: "0.1.0",
        groupedSubcommands: [
            CommandGroup(name: "Playback", subcommands: [
                Play.self, Pause.self, Toggle.self, Stop.self, Next.self, Previous.self,
            ]),
            CommandGroup(name: "Position and volume", subcommands: [Seek.self, Volume.self, ReplayGain.self, CrossfadeCommand.self, EqualizerCommand.self, OutputCommand.self]),
            CommandGroup(name: "Information", subcommands: [Status.self, WaveformCommand.self, LyricsCommand.self, WebCommand.self]),
            CommandGroup(name: "Queue", subcommands: [Queue.self, Playlist.self]),
            CommandGroup(name: "Library", subcommands: [Library.self, Browse.self, Rate.self, HistoryCommand.self, Pick.self, ContinueCommand.self]),
            CommandGroup(name: "MIDI", subcommands: [MIDI.self]),
            CommandGroup(name: "Sharing", subcommands: [Open.self, Export.self, Shares.self]),
            CommandGroup(name: "Setup", subcommands: [ConfigCommand.self, Doctor.self, Completions.self, Manual.self]),
        ]
    )

    /// Parses, runs, and maps every failure to one of the documented exit codes
    /// (ArgumentParser's own usage errors, 64, become 2).
    static func main() async {
        let arguments = protectNegativeNumbers(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            finish(reporting: error)
        }
        Glibc.exit(ExitStatus.ok)
    }

    /// Prints what `error` means and exits with its code.
    static func finish(reporting error: any Error) -> Never {
        switch error {
        case let failure as CLIFailure:
            Output.error("error: \(failure.message)")
            Glibc.exit(failure.code)
        case let dbusError as DBusError:
            let failure = dbusError.cliFailure
            Output.error("error: \(failure.message)")
            Glibc.exit(failure.code)
        default:
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { Output.line(message) }
                Glibc.exit(ExitStatus.ok)
            }
            if !message.isEmpty { Output.error(message) }
            // ArgumentParser reports usage errors with EX_USAGE (64); ours is 2.
            Glibc.exit(code == .validationFailure ? ExitStatus.badArgument : code.rawValue)
        }
    }

    /// `seek -10` and `volume -5` take a negative number as their argument, which
    /// ArgumentParser would read as an unknown option: put a `--` in front of it.
    static func protectNegativeNumbers(_ arguments: [String]) -> [String] {
        let takesSignedNumber: Set<String> = ["seek", "volume"]
        guard arguments.count >= 2, takesSignedNumber.contains(arguments[0]) else { return arguments }
        let value = arguments[1]
        guard value.count >= 2, value.hasPrefix("-"),
              let next = value.dropFirst().first, next.isNumber || next == "."
        else { return arguments }
        return [arguments[0], "--"] + arguments.dropFirst()
    }
}

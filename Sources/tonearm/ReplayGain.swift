import ArgumentParser
import DBus
import Foundation

struct ReplayGain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replaygain",
        abstract: "Print or set the ReplayGain mode.",
        discussion: """
            With no argument, prints the mode and the gain applied to what plays now. MODE is off, track, \\
            album or auto (album gain while an album plays in order, track gain when shuffling or between \\
            tracks of different albums). The change is heard at once; it lasts until the daemon restarts \\
            ([playback.replaygain] mode in config.toml is the default). --json prints {"mode", "gain"} \\
            (gain in dB).

            Examples: tonearm replaygain, tonearm replaygain album, tonearm replaygain off
            """
    )

    static let modes = ["off", "track", "album", "auto"]

    @Argument(help: ArgumentHelp("off, track, album or auto.", valueName: "mode"))
    var mode: String?

    @Flag(name: .long, help: "Print {\"mode\", \"gain\"} instead of text.")
    var json = false

    func validate() throws {
        if let mode, !Self.modes.contains(mode.lowercased()) {
            throw ValidationError("'\(mode)' is not a ReplayGain mode: use off, track, album or auto")
        }
    }

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if let mode {
            try await client.setTonearmProperty("ReplayGainMode", .string(mode.lowercased()))
        }
        let current = try await client.tonearmProperty("ReplayGainMode").looseString ?? "?"
        let gain = try await client.tonearmProperty("ReplayGain").looseDouble ?? 0
        if json {
            Output.line(JSONValue.object([("mode", .string(current)), ("gain", .number((gain * 100).rounded() / 100))]).serialized)
        } else {
            Output.line("\(current) (now \(String(format: "%+.2f", gain)) dB)")
        }
    }
}

import ArgumentParser
import DBus
import Foundation

struct CrossfadeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crossfade",
        abstract: "Print or set how long tracks overlap.",
        discussion: """
            With no argument, prints the crossfade length and the silence threshold. SECONDS is 0 (off) to 15: \\
            from the next join, a track fades out while the next fades in (equal-power by default). Consecutive \\
            tracks of one album played in order still join gaplessly unless [playback.crossfade] albums = "fade"; \\
            a track's trailing silence (below --silence dBFS) is skipped before the fade. The setting is kept \\
            across restarts. --json prints {"seconds", "silenceThreshold"}.

            Examples: tonearm crossfade, tonearm crossfade 6, tonearm crossfade 0, tonearm crossfade --silence -45
            """
    )

    @Argument(help: ArgumentHelp("Seconds of overlap, 0 (off) to 15.", valueName: "seconds"))
    var seconds: Double?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The level (dBFS, -96 to 0) below which a track's end is silence.", valueName: "dB"))
    var silence: Double?

    @Flag(name: .long, help: "Print {\"seconds\", \"silenceThreshold\"} instead of text.")
    var json = false

    func validate() throws {
        if let seconds, !(0...15).contains(seconds) { throw ValidationError("crossfade is 0 (off) to 15 seconds, not \(seconds)") }
        if let silence, !(-96...0).contains(silence) { throw ValidationError("the silence threshold is -96 to 0 dBFS, not \(silence)") }
    }

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if let seconds { try await client.setTonearmProperty("Crossfade", .double(seconds)) }
        if let silence { try await client.setTonearmProperty("CrossfadeSilenceThreshold", .double(silence)) }
        let current = try await client.tonearmProperty("Crossfade").looseDouble ?? 0
        let threshold = try await client.tonearmProperty("CrossfadeSilenceThreshold").looseDouble ?? 0
        if json {
            Output.line(JSONValue.object([("seconds", .number(current)), ("silenceThreshold", .number(threshold))]).serialized)
        } else if current > 0 {
            Output.line("crossfade \(Self.format(current)) s (silence below \(Self.format(threshold)) dBFS skipped)")
        } else {
            Output.line("crossfade off")
        }
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

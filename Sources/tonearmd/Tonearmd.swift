import ArgumentParser
import Foundation
import Logging
import RawPaths
import ServiceLifecycle
import TonearmCore

/// The Tonearm daemon: one player per session, driven over D-Bus with MPRIS. Its command line as ArgumentParser reads
/// it (help, errors, and any form `DaemonOptions(fastParsing:)` leaves to it); what it does is `DaemonOptions.run`.
struct Tonearmd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearmd",
        abstract: "The Tonearm music player daemon (MPRIS 2.2 on the session bus).",
        discussion: """
        With FILEs, starts with them queued (replacing the saved queue) and playing. Without, \
        restores the saved queue paused at the saved position, or sits idle and Stopped. \
        When there is no session bus, starts a private one and prints its DBUS_SESSION_BUS_ADDRESS.
        """
    )

    @Argument(help: "Files or URIs to play.")
    var files: [String] = []

    @Option(name: .customLong("audio-sink"), help: "GStreamer pipeline description for the audio output (default: autoaudiosink).")
    var audioSink: String?

    @Option(help: "Config file (default: $XDG_CONFIG_HOME/tonearm/config.toml).")
    var config: String?

    @Option(name: .customLong("tick-interval"), help: "Seconds between Tick signals while playing (default 1).")
    var tickInterval: Double?

    @Option(name: .customLong("web-port"), help: "Port of the web face (default: [web] port, 6680; 0 picks a free one).")
    var webPort: Int?

    @Flag(name: .shortAndLong, help: "Log GStreamer and D-Bus detail.")
    var verbose = false

    @Flag(help: "Print the effective configuration, each value with where it came from, and exit.")
    var printConfig = false

    @Flag(help: "Check GStreamer plugins, the SoundFont, the audio output, the config and folders, and exit.")
    var doctor = false

    @Flag(help: "With --print-config or --doctor: print JSON.")
    var json = false

    @Flag(name: .customLong("measure-loudness"), help: .hidden)
    var measureLoudness = false

    /// The options as parsed.
    var options: DaemonOptions {
        DaemonOptions(files: files, audioSink: audioSink, config: config, tickInterval: tickInterval, webPort: webPort,
                      verbose: verbose, printConfig: printConfig, doctor: doctor, json: json, measureLoudness: measureLoudness)
    }

    func run() async throws {
        try await options.run()
    }

    /// This executable (for the loudness worker, which is tonearmd started with --measure-loudness).
    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }

    /// A command-line argument as a URI: URIs stay, paths become absolute file:// URIs.
    static func uri(for argument: String) -> String {
        // scheme://…, checked by hand: a regular expression would load ICU (megabytes) for one test.
        if let separator = argument.range(of: "://"), let first = argument.first, first.isASCII, first.isLetter,
           argument[..<separator.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) {
            return argument
        }
        // A name that is not UTF-8 (a Latin-1 rip's, or its folder's) has no Swift String: C's argv and getcwd give
        // its bytes.
        let absolute = RawPath.absolute(RawPath.commandLineBytes(of: argument), relativeTo: RawPath.currentDirectory)
        if String(validating: absolute, as: UTF8.self) == nil { return RawPath(bytes: absolute).uri }
        let path = argument.hasPrefix("/") ? argument : FileManager.default.currentDirectoryPath + "/" + argument
        return URL(fileURLWithPath: path).standardizedFileURL.absoluteString
    }
}

/// An exit with a message and a code.
struct Failure: Error, CustomStringConvertible {
    let message: String
    let code: Int32
    var description: String { message }
}

/// glibc's malloc_trim(3) and mallopt(3) (malloc.h is not part of Swift's Glibc module).
@_silgen_name("malloc_trim")
func malloc_trim(_ pad: Int) -> Int32

@_silgen_name("mallopt")
func mallopt(_ parameter: Int32, _ value: Int32) -> Int32

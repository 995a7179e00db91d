import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TonearmCore

/// The Tonearm daemon: one player per session, driven over D-Bus with MPRIS.
@main
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

    func run() async throws {
        // A Snapcast server (or any reader of a pipe or socket we write) that goes away must never kill the daemon: the
        // write fails with EPIPE instead, and the output is reported lost and reconnected.
        signal(SIGPIPE, SIG_IGN)
        // Two malloc arenas, not eight per core: a daemon with a dozen threads (GStreamer, D-Bus, tasks) otherwise
        // keeps each thread's high-water mark; measured by the reliability fuzzer (RSS +9% → +4% over 10,000 calls).
        _ = mallopt(-8 /* M_ARENA_MAX */, 2)
        if measureLoudness {
            // The daemon's own loudness worker (and the benchmark's): measures FILES at idle priority, prints JSON.
            let status = LoudnessWorkerMain.run(files)
            if status != 0 { throw ExitCode(status) }
            return
        }
        if printConfig || doctor {
            try report()
            return
        }
        do {
            try await serve()
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("tonearmd: \(failure.message)\n".utf8))
            throw ExitCode(failure.code)
        }
    }

    /// Reads the settings, builds the components, and runs them as services of one group until a signal, Quit, the
    /// session bus going away or an engine failure ends it.
    func serve() async throws {
        let logger = startLogging()
        let dirs = XDGDirectories()
        let (settings, plugins) = try readSettings(dirs)

        // The name first, with calls held while the player is put together: clients and D-Bus activation see the
        // player as soon as it exists, and the calls they send meanwhile are answered in order once it can. Reads of
        // the player's state are answered from the moment the saved state is restored, right after the parts are
        // built; every other call from the moment the command line's files, read for their tags, replace it. None
        // waits for GStreamer (the deferred engine carries commands out once it is ready) nor for the sources.
        let shutdown = Shutdown()
        let bus = try SessionBus.connect(logger: logger)
        try bus.takePlayerName()
        let parts = try Components(settings: settings, plugins: plugins, dirs: dirs, sinkFromCommandLine: audioSink != nil,
                                   connection: bus.connection, shutdown: shutdown, logger: logger)

        // The engine is built alongside from the start. Every other service starts in this order, each once the one
        // before it has started, and the group stops them in the reverse one: the player stops (and saves) last.
        let order = StartOrder(logger: logger)
        let start = StartQueue(player: parts.player, saved: parts.saved, files: files, logger: logger)
        parts.engine.begin()
        await parts.player.start()
        await start.restoreEarly(answeringReadsOn: bus.connection)
        await start.queueFiles()
        // Only a saved queue whose renditions its sources must make again keeps the calls held, until the bus face's
        // turn restores it.
        if start.isRestored { bus.connection.releaseIncomingCalls() }
        let player = PlayerService(player: parts.player, turn: order.next("player"))
        let indexCheck = IndexCheck(library: parts.library, folder: dirs.dataFolder.path, turn: order.next("library-index"),
                                    shutdown: shutdown)
        let services: [(any DaemonService)?] = [
            parts.engine,
            player,
            indexCheck,
            // For tests: the sources start once this file exists, so "the player is up, the sources are not" is a
            // state a test controls rather than a race.
            ProcessInfo.processInfo.environment["TONEARM_SOURCES_GATE"].map { FileGate(path: $0, turn: order.next("sources-gate")) },
            // Right after the player: listens queued by the last run are sent while the rest starts.
            parts.scrobbler.map { FaceService(face: $0, turn: order.next("scrobble")) },
            PluginService(plugin: parts.midi, context: parts.context(for: parts.midi), title: "MIDI",
                          turn: order.next("midi"), logger: logger),
            PluginService(plugin: parts.shares, context: parts.context(for: parts.shares), title: "received shares",
                          turn: order.next("shares"), logger: logger),
            // A LocalSend device that cannot start (its port taken) is logged; the player runs on without it.
            PluginService(plugin: parts.localSend, context: parts.context(for: parts.localSend), title: "LocalSend",
                          turn: order.next("localsend"), logger: logger),
            // Scanning and watching run on the library's own threads, off the player's path.
            PluginService(plugin: parts.library, context: parts.context(for: parts.library), title: "library",
                          turn: order.next("library"), logger: logger),
            BusFaceService(face: parts.face, connection: bus.connection, start: start, turn: order.next("bus"), logger: logger),
            parts.mpd.map { FaceService(face: $0, turn: order.next("mpd-protocol")) },
            parts.web.map { FaceService(face: $0, turn: order.next("web")) },
            parts.upnp.map { FaceService(face: $0, turn: order.next("upnp")) },
            MemoryTrimmer(turn: order.next("memory")),
        ]
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.compactMap { $0?.configuration },
            gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger))
        shutdown.attach(group)
        do {
            try await group.run()
        } catch {
            logger.error("\(error)")
        }
        // The replies to the calls being answered (a Quit's) leave before the connection closes.
        bus.connection.closeAfterReplies()
        await bus.connection.waitUntilClosed()
        bus.privateBus?.stop()
        if let failure = parts.engine.failure ?? indexCheck.failure { throw Failure(message: failure, code: 2) }
        logger.info("state saved; bye")
    }

    /// Sends the log to stderr in the form its reader takes, at debug level with `--verbose`.
    func startLogging() -> Logger {
        let level: Logger.Level = verbose ? .debug : .info
        let destination = TonearmLogHandler.destination()
        LoggingSystem.bootstrap { label in TonearmLogHandler(label: label, destination: destination, logLevel: level) }
        if verbose, getenv("GST_DEBUG") == nil {
            // GStreamer's own warnings and errors (element by element) go to stderr too.
            setenv("GST_DEBUG", "*:2", 1)
        }
        return Logger(label: "tonearmd")
    }

    /// The config file with the command line's options over it, and every plugin's section; a bad one is a `Failure`
    /// with exit status 2.
    func readSettings(_ dirs: XDGDirectories) throws -> (Configuration, PluginSettings) {
        do {
            var settings = try Configuration.load(from: config.map { URL(fileURLWithPath: $0) } ?? dirs.configFile)
            if let audioSink {
                settings.audioSink = audioSink
                settings.sources["audio-sink"] = .commandLine
            }
            if let tickInterval {
                settings.tickInterval = try Configuration.parseTickInterval(seconds: tickInterval, origin: "--tick-interval")
                settings.sources["tick-interval"] = .commandLine
            }
            if let webPort {
                guard (0...65535).contains(webPort) else { throw TonearmError(.invalidConfig, "--web-port must be 0 to 65535") }
                settings.web.port = webPort
                settings.sources["web"] = .commandLine
            }
            var plugins = try PluginSettings(settings)
            plugins.streams = try plugins.streams.preparingTrust(in: dirs.cacheHome.appendingPathComponent("tonearm"))
            return (settings, plugins)
        } catch let error as TonearmError {
            throw Failure(message: error.message, code: 2)
        }
    }

    /// `--print-config` and `--doctor`: answers for `tonearm config` and `tonearm doctor`.
    func report() throws {
        let file = config.map { URL(fileURLWithPath: $0) } ?? XDGDirectories().configFile
        if doctor {
            let checks = Doctor.run(configFile: file)
            FileHandle.standardOutput.write(Data(Doctor.json(checks).utf8))
            return
        }
        do {
            var settings = try Configuration.load(from: file)
            if let audioSink {
                settings.audioSink = audioSink
                settings.sources["audio-sink"] = .commandLine
            }
            let effective = try EffectiveConfig(settings, file: file)
            FileHandle.standardOutput.write(Data((json ? effective.json : effective.toml).utf8))
        } catch let error as TonearmError {
            FileHandle.standardError.write(Data("tonearmd: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
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
        let cwd = FileManager.default.currentDirectoryPath
        let path = argument.hasPrefix("/") ? argument : cwd + "/" + argument
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

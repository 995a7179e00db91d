import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TonearmCore

/// What the daemon does with its options: serve, or answer `--print-config`, `--doctor` or `--measure-loudness`.
extension DaemonOptions {
    func run() async throws {
        // A Snapcast server (or any reader of a pipe or socket we write) that goes away must never kill the daemon: the
        // write fails with EPIPE instead, and the output is reported lost and reconnected.
        signal(SIGPIPE, SIG_IGN)
        // Two malloc arenas, not eight per core: a daemon with a dozen threads (GStreamer, D-Bus, tasks) otherwise
        // keeps each thread's high-water mark; measured by the reliability fuzzer (RSS +9% → +4% over 10,000 calls).
        _ = mallopt(-8 /* M_ARENA_MAX */, 2)
        // Blocks of 128 KiB and more always mapped on their own and unmapped when freed: by default glibc raises this
        // threshold each time such a block is freed (up to 32 MiB), after which a hostile 1 MB message or a 100,000
        // element array stays in an arena, held there by whatever was allocated above it (a fuzzer's 1,500 calls left
        // 3–6 MB more resident, from one run to the next).
        _ = mallopt(-3 /* M_MMAP_THRESHOLD */, 128 * 1024)
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

        // The engine is built alongside once the command line's files are queued (their tags first: on two CPUs,
        // GStreamer's set-up beside them put the track in Metadata a few ms later), else at the first Play. Every
        // other service starts in this order, each once the one before it has started, and the group stops them in the
        // reverse one: the player stops (and saves) last.
        let order = StartOrder(logger: logger)
        let start = StartQueue(player: parts.player, saved: parts.saved, files: files, logger: logger)
        if files.isEmpty { parts.engine.begin(now: false) }
        await parts.player.start()
        await start.restoreEarly(answeringReadsOn: bus.connection)
        await start.queueFiles()
        if !files.isEmpty { parts.engine.begin(now: true) }
        start.checkFiles()
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
            MemoryTrimmer(turn: order.next("memory"), startOver: parts.engine.settled,
                          interval: .seconds(fromEnvironment: "TONEARM_MEMORY_TRIM_INTERVAL") ?? .seconds(10)),
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
            let settings = try configuration(file: configFile(dirs))
            var plugins = try PluginSettings(settings)
            plugins.streams = try plugins.streams.preparingTrust(in: dirs.cacheHome.appendingPathComponent("tonearm"))
            return (settings, plugins)
        } catch let error as TonearmError {
            throw Failure(message: error.message, code: 2)
        }
    }

    /// `--config`, else the XDG config file.
    func configFile(_ dirs: XDGDirectories) -> URL {
        config.map { URL(fileURLWithPath: $0) } ?? dirs.configFile
    }

    /// The config file with the command line's `--audio-sink`, `--tick-interval` and `--web-port` over it: what a start
    /// plays with and what `--print-config` shows; a bad value is a `TonearmError`.
    func configuration(file: URL) throws -> Configuration {
        var settings = try Configuration.load(from: file)
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
        return settings
    }

    /// `--print-config` and `--doctor`: answers for `tonearm config` and `tonearm doctor`.
    func report() throws {
        let file = configFile(XDGDirectories())
        if doctor {
            let checks = Doctor.run(configFile: file)
            FileHandle.standardOutput.write(Data(Doctor.json(checks).utf8))
            return
        }
        do {
            let effective = try EffectiveConfig(try configuration(file: file), file: file)
            FileHandle.standardOutput.write(Data((json ? effective.json : effective.toml).utf8))
        } catch let error as TonearmError {
            FileHandle.standardError.write(Data("tonearmd: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
    }
}

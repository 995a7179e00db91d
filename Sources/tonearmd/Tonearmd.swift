import ArgumentParser
import DBus
import Foundation
import LocalLibrary
import Logging
import MIDI
import MPDProtocol
import MPRIS
import Web
import Playback
import ReceivedShares
import LocalSend
import ServiceLifecycle
import Streams
import Synchronization
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

    func serve() async throws {
        let level: Logger.Level = verbose ? .debug : .info
        let destination = TonearmLogHandler.destination()
        LoggingSystem.bootstrap { label in TonearmLogHandler(label: label, destination: destination, logLevel: level) }
        if verbose, getenv("GST_DEBUG") == nil {
            // GStreamer's own warnings and errors (element by element) go to stderr too.
            setenv("GST_DEBUG", "*:2", 1)
        }
        let logger = Logger(label: "tonearmd")
        let dirs = XDGDirectories()

        var settings: Configuration
        var plugins: PluginSettings
        do {
            settings = try Configuration.load(from: config.map { URL(fileURLWithPath: $0) } ?? dirs.configFile)
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
            plugins = try PluginSettings(settings)
            plugins.streams = try plugins.streams.preparingTrust(in: dirs.cacheHome.appendingPathComponent("tonearm"))
        } catch let error as TonearmError {
            throw Failure(message: error.message, code: 2)
        }

        // The name first, with calls held until everything below is ready: clients and D-Bus activation see the
        // player as soon as it exists, and the calls they send meanwhile are answered in order once it can.
        let shutdown = Shutdown()
        let bus = try SessionBus.connect(logger: logger)
        bus.connection.holdIncomingCalls()
        switch try bus.connection.requestName(MPRISService.busName) {
        case .primaryOwner, .alreadyOwner:
            break
        case .exists, .inQueue:
            throw Failure(message: "Tonearm is already running on this session bus (\(MPRISService.busName)).", code: 1)
        }

        let (midiSettings, streamsSettings, sharesSettings) = (plugins.midi, plugins.streams, plugins.shares)
        let (localSendSettings, librarySettings) = (plugins.localSend, plugins.library)
        let streams = StreamsSource(settings: streamsSettings)
        let midi = MIDISource(settings: midiSettings, resumeFile: dirs.stateHome.appendingPathComponent("tonearm/midi.json"),
                              renditionFolder: dirs.cacheHome.appendingPathComponent("tonearm/midi"))

        // GStreamer's set-up (registry, playbin, the sink) takes the longest: on a thread of its own while the index,
        // the caches and the shares are opened here.
        let elementSettings = midi.elementSettings.merging(streamsSettings.elementSettings) { $0.merging($1) { a, _ in a } }
        // The saved state is read first: the output last switched to live is where audio starts.
        let store = StateStore(url: dirs.stateFile)
        let saved: PersistedState?
        do { saved = try store.load() } catch {
            logger.warning("\(error)")
            saved = nil
        }
        // The command line's --audio-sink plays first; else the output switched to live, else the config's `output`,
        // else its audio-sink ("default").
        let outputs = settings.outputs.all(audioSink: settings.audioSink)
        let startOutput = settings.outputs.startOutput(audioSink: settings.audioSink, sinkFromCommandLine: audioSink != nil,
                                                       saved: saved?.output)
        // The player answers from the first call on through the deferred engine; the real one is attached when
        // GStreamer is ready, and what was asked meanwhile is carried out then.
        let deferred = DeferredEngine(output: startOutput)
        let engineFailure = Mutex<String?>(nil)
        let engineGate = ProcessInfo.processInfo.environment["TONEARM_ENGINE_GATE"]
        Task.detached(priority: .userInitiated) { [startOutput, elementSettings] in
            do {
                let engine = try await DispatchQueue.global().run {
                    // For tests: an engine made slow on purpose starts once this file exists.
                    if let engineGate { while access(engineGate, F_OK) != 0 { usleep(5_000) } }
                    return try PlaybackEngine(output: startOutput, logger: Logger(label: "tonearm.playback"), elementSettings: elementSettings)
                }
                deferred.attach(engine)
                logger.info("audio engine ready")
            } catch {
                let named = startOutput.name == OutputSettings.defaultName ? "" : " (output \(startOutput.name))"
                engineFailure.withLock { $0 = "cannot build the audio output '\(startOutput.detail)'\(named): \(error)" }
                shutdown.request()
            }
        }
        let artCache = ArtCache(folder: dirs.artCache)
        let media = GStreamerMedia(loudnessWorker: Self.executablePath)
        let library: LocalLibrary
        do {
            library = try LocalLibrary(folders: librarySettings.folders,
                                       excluding: sharesSettings.inboxes + [sharesSettings.rejected], database: dirs.dataFolder.appendingPathComponent("library.sqlite"),
                                       artCache: artCache, logger: Logger(label: "tonearm.library"))
        } catch {
            throw Failure(message: "cannot open the library index in \(dirs.dataFolder.path): \(error)", code: 2)
        }
        // MIDI first (it knows MIDI files by content, wherever they are); then the library, which answers for files
        // in the music folders with indexed tags and art; then any other file; network streams and playlists apart.
        let player = Player(engine: deferred, plugins: [midi, library, FileSource(artCache: artCache) { await library.enrich($0) }, streams],
                            stateStore: store, artCache: artCache, tickInterval: settings.tickInterval,
                            lyricsFinder: LyricsSources.finder(midi: midi), replayGain: settings.replayGain,
                            reconnectPolicy: streamsSettings.reconnect, outputs: outputs, outputRecovery: settings.outputs.recovery,
                            configuredOutput: settings.outputs.start)
        let shares = ReceivedShares(settings: sharesSettings, artCache: artCache, media: media,
                                    logger: Logger(label: "tonearm.shares")) { file in
            await library.index(file)
        }
        let localSend = LocalSend(settings: localSendSettings, shares: shares)
        // Exported now (calls stay held) and subscribed to the library's events before the library starts.
        // One store of saved playlists for both faces (MPRIS Playlists and the CLI, and MPD's stored playlists).
        let playlists = SavedPlaylists(folder: dirs.dataFolder.appendingPathComponent("playlists"),
                                       musicFolders: librarySettings.folders,
                                       maximumEntries: streamsSettings.playlistMaxEntries)
        let waveforms = WaveformService(media: media, folder: dirs.waveformCache)
        let web = settings.web.enabled
            ? WebFace(settings: settings.web, player: player, library: library, shares: shares, playlists: playlists,
                      waveforms: waveforms, artFolder: dirs.artCache, logger: Logger(label: "tonearm.web")) : nil
        let face = MPRISService(connection: bus.connection, player: player, media: media, library: library,
                                browsables: [library, midi], shares: shares, waveforms: waveforms,
                                playlists: playlists, webAddress: { web?.address }) {
            shutdown.request()
        }
        // The MPD face follows the player from now on (its playlist version counts the restore too).
        let mpd = settings.mpdProtocol.enabled
            ? MPDServer(settings: settings.mpdProtocol, player: player, library: library,
                        playlists: playlists) : nil
        func context(_ plugin: any SourcePlugin, _ label: String) -> PluginContext {
            PluginContext(pluginName: plugin.name, config: settings.pluginSections[plugin.name] ?? [:],
                          storageFolder: dirs.dataFolder.appendingPathComponent(plugin.name),
                          logger: Logger(label: label), player: player, media: media)
        }
        let midiContext = context(midi, "tonearm.midi")
        let sharesContext = context(shares, "tonearm.shares")
        let localSendContext = context(localSend, "tonearm.localsend")
        let libraryContext = context(library, "tonearm.library")
        let files = files

        // Every part starts in this order and stops in the reverse one: the player stops (and saves) last.
        let playerPart = Part("player", after: nil, start: { await player.start() }, stop: { await player.shutdown() })
        let midiPart = Part("midi", after: playerPart, start: {
            try? await midi.start(midiContext)
        }, stop: { await midi.stop() })
        let sharesPart = Part("shares", after: midiPart, start: {
            do { try await shares.start(sharesContext) } catch { logger.error("received shares: \(error)") }
        }, stop: { await shares.stop() })
        // A LocalSend device that cannot start (its port taken) is logged; the player runs on without it.
        let localSendPart = Part("localsend", after: sharesPart, start: {
            do { try await localSend.start(localSendContext) } catch { logger.error("LocalSend: \(error)") }
        }, stop: { await localSend.stop() })
        // Scanning and watching run on the library's own threads, off the player's path.
        let libraryPart = Part("library", after: localSendPart, start: {
            do { try await library.start(libraryContext) } catch { logger.error("library: \(error)") }
        }, stop: { await library.stop() })
        let busPart = Part("bus", after: libraryPart, start: {
            await Self.restore(player, saved: saved, files: files, logger: logger)
            bus.connection.releaseIncomingCalls()
            logger.info("ready on the session bus as \(MPRISService.busName)")
        }, work: {
            // Forwards events until shutdown; the session bus going away ends it, and with it the daemon.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await face.run() }
                group.addTask {
                    await bus.connection.waitUntilClosed()
                    if !Task.isCancelled { logger.notice("the session bus went away; saving state and exiting") }
                }
                await group.next()
                group.cancelAll()
            }
        })
        let mpdPart = Part("mpd-protocol", after: busPart, start: { await mpd?.start() }, stop: { await mpd?.stop() })
        let webPart = Part("web", after: mpdPart, start: { web?.start() }, stop: { await web?.stop() })
        let trimmingPart = Part("memory", after: webPart, work: {
            // glibc keeps memory freed after big messages (a 100,000-element array, a 1 MB string) in its arenas;
            // a daemon that runs for weeks hands it back now and then instead of keeping its high-water mark.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                _ = malloc_trim(0)
            }
        })
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [playerPart, midiPart, sharesPart, localSendPart, libraryPart, busPart, mpdPart, webPart, trimmingPart].map(\.configuration),
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
        if let failure = engineFailure.withLock({ $0 }) { throw Failure(message: failure, code: 2) }
        logger.info("state saved; bye")
    }

    /// The saved queue, or the command line's files in its place (keeping loop, shuffle and volume), playing.
    static func restore(_ player: Player, saved: PersistedState?, files: [String], logger: Logger) async {
        if files.isEmpty {
            if let saved { await player.restore(saved) }
        } else {
            if var saved {
                saved.queue.clear() // keep loop, shuffle, volume; the files replace the queue
                await player.restore(saved)
            }
            let uris = files.map(Self.uri(for:))
            let (ids, errors) = await player.addSkippingBad(uris, at: .end, replacing: true)
            for error in errors { logger.error("\(error.message)") }
            if let first = ids.first { await player.goTo(first) }
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

import ArgumentParser
import DBus
import Foundation
import TestSupport

@main
struct TonearmBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm-bench",
        abstract: "Measures tonearmd beside mpv + mpv-mpris, VLC and mpd + mpDris2; prints Markdown tables with ratios to the best peer.",
        discussion: "Each figure is the median over --runs runs; every run uses a fresh private bus and fresh HOME/XDG folders.")

    @Option(help: "Runs per figure (default 5, or 2 with --quick).")
    var runs: Int?

    @Option(help: "Get(Position) calls per client per run (default 2000, or 200 with --quick).")
    var calls: Int?

    @Option(help: "Concurrent clients for the concurrent round-trip figures.")
    var clients = 8

    @Option(help: "Files in the generated library for the scan figures (default 10000, or 1000 with --quick).")
    var scanFiles: Int?

    @Option(help: "MIDI files in the generated folder for the listing figure (default 5000, or 200 with --quick).")
    var midiFiles: Int?

    @Option(help: "Minutes of music in the long SMF rendered (default 10, or 1 with --quick).")
    var midiMinutes: Int?

    @Flag(help: "Reduced size for CI: 2 runs, 200 calls, 2 s of CPU counting, 1000 files, 200 MIDI files, 1 minute of MIDI.")
    var quick = false

    @Option(help: "The tonearmd to measure (default: .build/release/tonearmd, else the one beside this binary).")
    var tonearmd: String?

    @Flag(help: "Measure tonearm only, not mpv, VLC, mpd or fluidsynth.")
    var skipPeers = false

    @Flag(help: "Only the ReplayGain figures (measurement speed beside loudgain and rganalysis, playback CPU).")
    var replaygainOnly = false

    @Flag(help: "Only the internet radio figures (a local Icecast stream: first audio, first title, memory; beside mpv and VLC).")
    var streamsOnly = false

    @Option(help: "Where to write the table (default: Benchmarks/results/latest.md in the package).")
    var output: String?

    func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
        if let calls, calls < 1 { throw ValidationError("--calls must be at least 1") }
        if clients < 1 { throw ValidationError("--clients must be at least 1") }
        if let scanFiles, scanFiles < 1 { throw ValidationError("--scan-files must be at least 1") }
        if let midiFiles, midiFiles < 1 { throw ValidationError("--midi-files must be at least 1") }
        if let midiMinutes, midiMinutes < 1 { throw ValidationError("--midi-minutes must be at least 1") }
    }

    func run() async throws {
        Cleanup.install()
        let settings = Bench.Settings(
            runs: runs ?? (quick ? 2 : 5), calls: calls ?? (quick ? 200 : 2000), clients: clients,
            cpuWindow: .seconds(quick ? 2 : 10), idleSettle: .milliseconds(quick ? 500 : 1000),
            toggles: quick ? 4 : 10, seeks: quick ? 3 : 6, playerctlRuns: quick ? 3 : 5)
        let scanFiles = self.scanFiles ?? (quick ? 1000 : 10_000)
        let root = Self.packageRoot
        let tonearmdPath = try resolveTonearmd(root: root)
        let cli = URL(fileURLWithPath: tonearmdPath).deletingLastPathComponent().appendingPathComponent("tonearm").path
        let tonearm = Player.tonearm(tonearmdPath, cli: FileManager.default.isExecutableFile(atPath: cli) ? cli : nil)
        let (peers, peerStatus, scanPeer) = skipPeers ? ([], ["mpv": "skipped", "vlc": "skipped", "mpd": "skipped", "mpd-scan": "skipped"], nil)
            : Self.findPeers()

        let media = TemporaryDirectory("tonearm-bench-media")
        Leftovers.add(media.url.path)
        defer { Leftovers.remove(media.url.path) }
        // VLC runs as an unprivileged user: it must reach the played files (only those, in play/).
        _ = chmod(media.url.path, 0o711)
        let play = media.file("play")
        try FileManager.default.createDirectory(at: play, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let track = play.appendingPathComponent("sine-60s.wav")
        try WAV.sine(seconds: 60).write(to: track)
        let (gaplessA, gaplessB) = try Gapless.writeHalves(in: play)
        let ogg = await Self.encodeSine(["vorbisenc", "!", "oggmux"], to: play.appendingPathComponent("sine-60s.ogg"))
        let mp3 = await Self.encodeSine(["lamemp3enc", "target=bitrate", "bitrate=192", "cbr=true"],
                                        to: play.appendingPathComponent("sine-60s.mp3"))
        let noise = play.appendingPathComponent("noise.ogg"), empty = play.appendingPathComponent("empty.ogg")
        try Data((0..<65536).map { _ in UInt8.random(in: 0...255) }).write(to: noise)
        try Data().write(to: empty)
        let gstRegistry = media.file("gst-registry.bin").path
        await Self.buildRegistry(gstRegistry)

        if replaygainOnly {
            let loudness = LoudnessBench(tonearm: tonearm, tonearmd: tonearmdPath, runs: settings.runs, files: quick ? 8 : 40,
                                         seconds: quick ? 10 : 30, cpuWindow: settings.cpuWindow, gstRegistry: gstRegistry,
                                         scratch: media.url)
            let report = loudness.markdown(try await loudness.measure()).joined(separator: "\n") + "\n"
            print(report, terminator: "")
            return
        }

        let streams = StreamBench(players: [tonearm] + peers, runs: settings.runs, listen: .seconds(quick ? 5 : 30),
                                  gstRegistry: gstRegistry)
        if streamsOnly {
            let report = streams.markdown(try await streams.measure()).joined(separator: "\n") + "\n"
            print(report, terminator: "")
            return
        }

        let bench = Bench(players: [tonearm] + peers, settings: settings,
                          media: Bench.Media(track: track.path, broken: [noise.path, empty.path], gaplessA: gaplessA, gaplessB: gaplessB,
                                             ogg: ogg, mp3: mp3),
                          gstRegistry: gstRegistry)
        var results = try await bench.measure()

        let library = media.file("library")
        log("generating \(scanFiles) tagged files in \(library.path)")
        let scanBytes = try await ScanLibrary.generate(count: scanFiles, in: library, scratch: media.url)
        let scan = ScanBench(tonearm: tonearm, mpd: scanPeer, runs: settings.runs, folder: library.path, files: scanFiles,
                             gstRegistry: bench.gstRegistry)
        try await scan.measure(into: &results)

        let midi = MIDIBench(tonearm: tonearm, runs: settings.runs, files: midiFiles ?? (quick ? 200 : 5000),
                             minutes: midiMinutes ?? (quick ? 1 : 10), fluidsynth: skipPeers ? nil : Self.which("fluidsynth"),
                             fluidsynthAbsence: skipPeers ? "skipped" : "not installed",
                             gstRegistry: bench.gstRegistry, scratch: media.url)
        let midiFigures = try await midi.measure()
        let fluidsynthVersion = skipPeers ? "skipped" : await Self.fluidsynthVersion()

        let loudness = LoudnessBench(tonearm: tonearm, tonearmd: tonearmdPath, runs: settings.runs, files: quick ? 8 : 40,
                                     seconds: quick ? 10 : 30, cpuWindow: settings.cpuWindow, gstRegistry: bench.gstRegistry,
                                     scratch: media.url)
        let loudnessFigures = try await loudness.measure()
        let streamFigures = try await streams.measure()

        let versions = await Self.versions(root: root, tonearmd: tonearmdPath, withPeers: !skipPeers)
        var report = Report(measured: Set(["tonearm"] + peers.map(\.label)), scanPeerMeasured: scanPeer != nil,
                            peerStatus: peerStatus, results: results, versions: versions, settings: settings,
                            scanFiles: scanFiles, scanBytes: scanBytes).markdown
        report += midi.markdown(midiFigures, fluidsynthVersion: fluidsynthVersion).joined(separator: "\n") + "\n"
        report += loudness.markdown(loudnessFigures).joined(separator: "\n") + "\n"
        report += streams.markdown(streamFigures).joined(separator: "\n") + "\n"
        print(report, terminator: "")

        let out = output.map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent("Benchmarks/results/latest.md")
        try FileManager.default.createDirectory(at: out.deletingLastPathComponent(), withIntermediateDirectories: true)
        try report.write(to: out, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("wrote \(out.path)\n".utf8))
    }

    /// The installed peers, what to print for each missing one, and mpd + mpc for the scan table.
    static func findPeers() -> ([Player], [String: String], (String, String)?) {
        var peers: [Player] = [], status: [String: String] = [:]
        if let mpv = which("mpv"), let plugin = mprisPlugin {
            peers.append(.mpv(mpv, plugin: plugin))
        } else {
            status["mpv"] = "not installed"
        }
        if let vlc = which("vlc") {
            let user = BenchUser.forVLC()
            if geteuid() == 0 && user == nil { status["vlc"] = "n/a: root, and no user nobody to run VLC as" } else { peers.append(.vlc(vlc, user: user)) }
        } else {
            status["vlc"] = "not installed"
        }
        let (mpd, mpc, mpDris2) = (which("mpd"), which("mpc"), which("mpDris2"))
        if let mpd, let mpc, let mpDris2 {
            peers.append(.mpd(mpd, mpDris2: mpDris2, mpc: mpc))
        } else {
            status["mpd"] = "not installed" + (mpd != nil && mpc != nil ? " (mpDris2)" : "")
        }
        var scanPeer: (String, String)?
        if let mpd, let mpc { scanPeer = (mpd, mpc) } else { status["mpd-scan"] = "not installed" }
        return (peers, status, scanPeer)
    }

    // MARK: Finding things

    /// This executable, symlinks resolved.
    static var executable: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    /// The package folder: the nearest ancestor of this binary (else of the working directory)
    /// holding Package.swift and Benchmarks/.
    static var packageRoot: URL {
        let fm = FileManager.default
        for start in [executable.deletingLastPathComponent(), URL(fileURLWithPath: fm.currentDirectoryPath)] {
            var dir = start
            while dir.path != "/" {
                if fm.fileExists(atPath: dir.appendingPathComponent("Package.swift").path),
                   fm.fileExists(atPath: dir.appendingPathComponent("Benchmarks").path) { return dir }
                dir = dir.deletingLastPathComponent()
            }
        }
        return URL(fileURLWithPath: fm.currentDirectoryPath)
    }

    func resolveTonearmd(root: URL) throws -> String {
        let fm = FileManager.default
        if let tonearmd {
            let path = URL(fileURLWithPath: tonearmd).standardizedFileURL.path
            guard fm.isExecutableFile(atPath: path) else { throw ValidationError("--tonearmd \(tonearmd): not an executable") }
            return path
        }
        for candidate in [root.appendingPathComponent(".build/release/tonearmd"),
                          Self.executable.deletingLastPathComponent().appendingPathComponent("tonearmd")]
        where fm.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        throw ValidationError("no tonearmd found: build it (swift build -c release --product tonearmd) or pass --tonearmd PATH")
    }

    /// Builds the GStreamer registry the runs share, as on any machine where GStreamer has run: an idle tonearm never
    /// sets GStreamer up, so no warm-up start builds it, and the first stream measured paid for a scan of every plugin.
    static func buildRegistry(_ path: String) async {
        guard let inspect = which("gst-inspect-1.0") else { return log("no gst-inspect-1.0: the first run builds the registry") }
        var environment = ProcessInfo.processInfo.environment
        environment["GST_REGISTRY"] = path
        let outcome = try? await TimedCommand.run(inspect, ["--exists", "playbin"], environment: environment)
        if outcome?.status != 0 { log("gst-inspect-1.0 could not build \(path); the first run builds it") }
    }

    /// The 60 s sine (44.1 kHz stereo, as the WAV) through `encoder` into `url`; nil, and a log line, if GStreamer
    /// could not make it.
    static func encodeSine(_ encoder: [String], to url: URL) async -> String? {
        let arguments = ["-q", "audiotestsrc", "wave=sine", "freq=440", "samplesperbuffer=4410", "num-buffers=600", "!",
                         "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!"]
            + encoder + ["!", "filesink", "location=\(url.path)"]
        guard let result = try? await gstLaunch(arguments), result.status == 0,
              FileManager.default.fileExists(atPath: url.path) else {
            log("gst-launch-1.0 could not make \(url.lastPathComponent): its rows are n/a")
            return nil
        }
        return url.path
    }

    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// mpv-mpris's plugin: Debian ships it as /usr/lib/mpv-mpris/mpris.so (linked from /etc/mpv/scripts).
    static var mprisPlugin: String? {
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        return ["/usr/lib/mpv-mpris/mpris.so", "/etc/mpv/scripts/mpris.so", "/usr/local/lib/mpv-mpris/mpris.so",
                home + "/.config/mpv/scripts/mpris.so"]
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    // MARK: Versions

    static func fluidsynthVersion() async -> String {
        guard let fluidsynth = which("fluidsynth"),
              let (out, _, _) = try? await runProcess(fluidsynth, ["--version"]) else { return "not installed" }
        return out.split(separator: "\n").first { $0.contains("version") }.map(String.init) ?? "unknown version"
    }

    static func versions(root: URL, tonearmd: String, withPeers: Bool) async -> [(String, String)] {
        func run(_ args: [String]) async -> String? {
            guard let (out, _, status) = try? await runProcess("/usr/bin/env", args),
                  status == 0, !out.isEmpty else { return nil }
            return out
        }
        func package(_ name: String) async -> String? { await run(["dpkg-query", "-W", "-f=${Version}", name]) }

        var list: [(String, String)] = []
        let git = await run(["git", "-C", root.path, "describe", "--always", "--dirty", "--tags"]) ?? "unknown"
        list.append(("tonearm", "\(git) (\(tonearmd))"))
        var gst = await package("libgstreamer1.0-0")
        if gst == nil { gst = await run(["gst-launch-1.0", "--version"])?.split(separator: "\n").last.map(String.init) }
        list.append(("GStreamer", gst ?? "unknown"))
        list.append(("TagLib", await package("libtag1v5") ?? "unknown"))
        if withPeers {
            let mpv = await run(["mpv", "--no-config", "--version"])?.split(separator: "\n").first.map(String.init)
            list.append(("mpv", mpv ?? "not installed"))
            let plugin = await package("mpv-mpris").map { "\($0) (\(mprisPlugin ?? "?"))" }
            list.append(("mpv-mpris", plugin ?? (mprisPlugin.map { "unknown version (\($0))" } ?? "not installed")))
            let mpd = await run(["mpd", "--version"])?.split(separator: "\n").first.map(String.init)
            list.append(("mpd", mpd ?? "not installed"))
            list.append(("mpc", await package("mpc") ?? (which("mpc") == nil ? "not installed" : "unknown version")))
            list.append(("mpDris2", await package("mpdris2") ?? (which("mpDris2") == nil ? "not installed" : "unknown version")))
            // `vlc --version` refuses to run as root, so the package's version.
            list.append(("VLC", await package("vlc-bin") ?? (which("vlc") == nil ? "not installed" : "unknown version")))
        }
        list.append(("playerctl", await package("playerctl") ?? (which("playerctl") == nil ? "not installed" : "unknown version")))
        var dbus = await package("dbus-daemon")
        if dbus == nil { dbus = await run(["dbus-daemon", "--version"])?.split(separator: "\n").first.map(String.init) }
        list.append(("dbus-daemon", dbus ?? "unknown"))
        return list
    }
}

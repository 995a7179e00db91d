import ArgumentParser
import DBus
import Foundation
import TestSupport

@main
struct TonearmBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tonearm-bench",
        abstract: "Measures tonearmd beside mpv + mpv-mpris (start-up, Get(Position)) and mpd (library scan); prints Markdown tables with ratios.",
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

    @Flag(help: "Reduced size for CI: 2 runs, 200 calls, 1000 files, 200 MIDI files, 1 minute of MIDI.")
    var quick = false

    @Option(help: "The tonearmd to measure (default: .build/release/tonearmd, else the one beside this binary).")
    var tonearmd: String?

    @Flag(help: "Measure tonearm only, not mpv or mpd.")
    var skipPeers = false

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
        let runs = self.runs ?? (quick ? 2 : 5)
        let calls = self.calls ?? (quick ? 200 : 2000)
        let scanFiles = self.scanFiles ?? (quick ? 1000 : 10_000)
        let root = Self.packageRoot
        let tonearmdPath = try resolveTonearmd(root: root)

        var players = [Player.tonearm(tonearmdPath)]
        var peerStatus = ["mpv": "skipped", "mpd": "skipped"]
        var mpd: (String, String)?
        if !skipPeers {
            if let mpv = Self.which("mpv"), let plugin = Self.mprisPlugin {
                players.append(.mpv(mpv, plugin: plugin))
            } else {
                peerStatus["mpv"] = "not installed"
            }
            if let server = Self.which("mpd"), let client = Self.which("mpc") {
                mpd = (server, client)
            } else {
                peerStatus["mpd"] = "not installed"
            }
        }

        let media = TemporaryDirectory("tonearm-bench-media")
        Leftovers.add(media.url.path)
        defer { Leftovers.remove(media.url.path) }
        let track = media.file("sine-60s.wav")
        try WAV.sine(seconds: 60).write(to: track)

        let bench = Bench(players: players, runs: runs, calls: calls, clients: clients, track: track.path,
                          gstRegistry: media.file("gst-registry.bin").path)
        var results = try await bench.measure()

        let library = media.file("library")
        log("generating \(scanFiles) tagged files in \(library.path)")
        let scanBytes = try await ScanLibrary.generate(count: scanFiles, in: library, scratch: media.url)
        let scan = ScanBench(tonearm: players[0], mpd: mpd, runs: runs, folder: library.path, files: scanFiles,
                             gstRegistry: bench.gstRegistry)
        try await scan.measure(into: &results)

        let midi = MIDIBench(tonearm: players[0], runs: runs, files: midiFiles ?? (quick ? 200 : 5000),
                             minutes: midiMinutes ?? (quick ? 1 : 10), fluidsynth: skipPeers ? nil : Self.which("fluidsynth"),
                             fluidsynthAbsence: skipPeers ? "skipped" : "not installed",
                             gstRegistry: bench.gstRegistry, scratch: media.url)
        let midiFigures = try await midi.measure()
        let fluidsynthVersion = skipPeers ? "skipped" : await Self.fluidsynthVersion()

        let versions = await Self.versions(root: root, tonearmd: tonearmdPath, withPeers: !skipPeers)
        var report = Report(players: players.map(\.label) + (mpd == nil ? [] : ["mpd"]), peerStatus: peerStatus,
                            results: results, versions: versions, runs: runs, calls: calls, clients: clients,
                            scanFiles: scanFiles, scanBytes: scanBytes).markdown
        report += midi.markdown(midiFigures, fluidsynthVersion: fluidsynthVersion).joined(separator: "\n") + "\n"
        print(report, terminator: "")

        let out = output.map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent("Benchmarks/results/latest.md")
        try FileManager.default.createDirectory(at: out.deletingLastPathComponent(), withIntermediateDirectories: true)
        try report.write(to: out, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("wrote \(out.path)\n".utf8))
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
        }
        var dbus = await package("dbus-daemon")
        if dbus == nil { dbus = await run(["dbus-daemon", "--version"])?.split(separator: "\n").first.map(String.init) }
        list.append(("dbus-daemon", dbus ?? "unknown"))
        return list
    }
}

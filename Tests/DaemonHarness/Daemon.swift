import DBus
import Foundation
import TestSupport
import Testing

/// The real `tonearmd` on a private dbus-daemon, with its own XDG folders, for one test.
public final class Daemon: @unchecked Sendable {
    public static let busName = "org.mpris.MediaPlayer2.tonearm"
    public static let path = "/org/mpris/MediaPlayer2"
    public static let player = "org.mpris.MediaPlayer2.Player"
    public static let trackList = "org.mpris.MediaPlayer2.TrackList"
    public static let tonearm = "org.tonearm.Player1"

    public let bus: PrivateBus
    public let home = TemporaryDirectory("tonearm-home")
    public let media = TemporaryDirectory("tonearm-media")
    public let client: DBusConnection
    public private(set) var process: ChildProcess?
    public let logFile: URL
    /// Set before `start` for the daemon's environment (JOURNAL_STREAM, say).
    public var extraEnvironment: [String: String] = [:]
    /// `--web-port` for the daemon: 0 (a free port) unless a test wants the config's port (nil).
    public var webPort: Int? = 0
    /// Another tonearmd to run (a sanitizer build, say); default: the one beside the tests.
    public var daemonExecutable: String?

    public init() throws {
        bus = try PrivateBus.start()
        client = try DBusConnection.connect(address: bus.address)
        logFile = home.file("tonearmd.log")
    }

    deinit {
        client.close()
        bus.stop()
    }

    /// Where the built executables are: beside the test bundle.
    public static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["TONEARM_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("tonearmd").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }

    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["HOME"] = home.url.path
        env["XDG_CONFIG_HOME"] = home.file("config").path
        env["XDG_DATA_HOME"] = home.file("data").path
        env["XDG_STATE_HOME"] = home.file("state").path
        env["XDG_CACHE_HOME"] = home.file("cache").path
        // One GStreamer registry for every test's daemon, as a user's machine has one after the first start: in a fresh
        // cache each daemon built its own, loading every plugin in scanner processes, and two dozen daemons starting
        // at once on a loaded machine took 20 s and more to their engine. Tests of a slow or cold GStreamer set one of
        // their own (`StartTests`).
        env["GST_REGISTRY"] = Self.binDirectory.appendingPathComponent("tests-gst-registry.bin").path
        env.merge(extraEnvironment) { $1 }
        return env
    }

    /// Starts tonearmd and waits until it owns its bus name and says in its log that it is ready: the daemon takes its
    /// name first and answers calls once its queue is restored, before its sources (library, shares, MIDI, LocalSend)
    /// have started; the ready line comes once they have, so after it their watchers run.
    /// `sink` nil: no --audio-sink, so the config's output plays. `ready` false: returns once the name is taken.
    public func start(_ arguments: [String] = [], sink: String? = "fakesink sync=true", tickInterval: Double? = nil,
                      ready: Bool = true) async throws {
        // The web face on a free port: daemons of tests one after another (or a user's own) never fight for 6680.
        var args = (sink.map { ["--audio-sink", $0] } ?? []) + (webPort.map { ["--web-port", String($0)] } ?? [])
        if let tickInterval { args += ["--tick-interval", String(tickInterval)] }
        let readyBefore = Self.readyLines(in: log)
        let p = try ChildProcess(daemonExecutable ?? Self.binDirectory.appendingPathComponent("tonearmd").path, args + arguments,
                                 environment: environment, captureOutput: false, outputFile: logFile.path)
        process = p
        // The name owned by this process: right after a kill -9 a loaded bus can still list the killed one as owner,
        // and a call sent then goes to it and fails.
        let up = try await eventually(timeout: .seconds(60)) {
            !p.isRunning ? true : (try await ownerPID() == p.pid)
        }
        guard up, p.isRunning else {
            throw DaemonError.didNotStart(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "")
        }
        guard ready else { return }
        // Not a call: every call is answered while the sources still start. The log goes on from an earlier start.
        let said = await eventually(timeout: .seconds(60)) {
            !p.isRunning || Self.readyLines(in: log) > readyBefore
        }
        guard said, p.isRunning else {
            _ = await p.wait()  // it took its name, then gave up while starting (a bad audio sink, an unreadable index…)
            throw DaemonError.didNotStart(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "")
        }
    }

    /// How many times a log says the daemon is ready (once every part before the bus face has started).
    public static func readyLines(in log: String) -> Int {
        log.components(separatedBy: "\n").filter { $0.contains("ready on the session bus") }.count
    }

    /// The process id of the player name's owner on the bus, or nil while nobody owns it.
    private func ownerPID() async throws -> pid_t? {
        guard try await client.nameHasOwner(Self.busName) else { return nil }
        let reply = try? await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                           member: "GetConnectionUnixProcessID", arguments: [.string(Self.busName)])
        return reply?.first?.int64Value.map { pid_t($0) }
    }

    /// kill -9: no chance to save anything.
    public func kill9() async {
        process?.signal(SIGKILL)
        await process?.wait()
    }

    /// SIGTERM, as systemd sends at logout; returns the exit status.
    public func terminate() async -> Int32 {
        guard let p = process else { return -1 }
        p.signal(SIGTERM)
        return await p.wait() ?? -1
    }

    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Writes the daemon's config.toml (before `start`).
    public func writeConfig(_ text: String) throws {
        let config = home.file("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: config, atomically: true, encoding: .utf8)
    }

    // MARK: Clients

    /// Runs a command-line client against this bus; returns stdout (trimmed) and the exit status.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) async throws -> (out: String, status: Int32) {
        let (out, _, status) = try await runProcess(tool, arguments, environment: environment)
        return (out, status)
    }

    @discardableResult
    public func playerctl(_ arguments: String...) async throws -> String {
        try await run("playerctl", ["--player=tonearm"] + arguments).out
    }

    public func tonearm(_ arguments: String...) async throws -> (out: String, status: Int32) {
        try await run(Self.binDirectory.appendingPathComponent("tonearm").path, arguments)
    }

    public func call(_ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(destination: Self.busName, path: Self.path, interface: interface, member: member, arguments: arguments)
    }

    public func get(_ interface: String, _ name: String) async throws -> DBusValue {
        try await client.getProperty(destination: Self.busName, path: Self.path, interface: interface, name: name)
    }

    public func set(_ interface: String, _ name: String, _ value: DBusValue) async throws {
        try await client.setProperty(destination: Self.busName, path: Self.path, interface: interface, name: name, value: value)
    }

    public func status() async throws -> String { try await get(Self.player, "PlaybackStatus").stringValue ?? "" }
    public func metadata() async throws -> [String: DBusValue] { try await get(Self.player, "Metadata").vardictValue ?? [:] }
    public func trackID() async throws -> String { try await metadata()["mpris:trackid"]?.stringValue ?? "" }
    public func position() async throws -> Int64 { try await get(Self.player, "Position").int64Value ?? -1 }
    public func tracks() async throws -> [String] { (try await get(Self.trackList, "Tracks").arrayValue ?? []).compactMap(\.stringValue) }

    /// Waits for a property to reach a value.
    public func waitFor(_ what: String = "condition", timeout: Duration = .seconds(45), _ condition: () async throws -> Bool) async throws {
        try await waitUntil(what, timeout: timeout, interval: .milliseconds(20), detail: "daemon log:\n\(log.suffix(3000))", condition)
    }

    // MARK: Media

    /// Writes a sine WAV into the media folder and returns its path.
    @discardableResult
    /// Mono at 11,025 Hz keeps long test tracks small; tests that check samples write their own.
    public func sine(_ name: String, seconds: Double, frequency: Double = 440, startFrame: Int = 0) throws -> String {
        let url = media.file(name)
        try WAV.sine(frequency: frequency, seconds: seconds, startFrame: startFrame, sampleRate: 11025, channels: 1).write(to: url)
        return url.path
    }

    /// Writes a long sine WAV (440 Hz, half scale) into the media folder with sox and returns its path: millions of
    /// samples computed in the test process (a debug build) would hold one of its two concurrency threads, and every
    /// test waiting on it, for seconds on a loaded machine.
    public func longSine(_ name: String, seconds: Int, sampleRate: Int = 11025, channels: Int = 1) async throws -> String {
        let path = media.file(name).path
        let made = try await runProcess("/usr/bin/sox", ["-n", "-r", "\(sampleRate)", "-c", "\(channels)", "-b", "16", path,
                                                         "synth", "\(seconds)", "sine", "440", "vol", "0.5"])
        try #require(made.status == 0, "sox could not make \(name): \(made.err)")
        return path
    }

    public func garbage(_ name: String, bytes: Int = 40_000) throws -> String {
        let url = media.file(name)
        var g = SystemRandomNumberGenerator()
        try Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &g) }).write(to: url)
        return url.path
    }

    public static func uri(_ path: String) -> String { URL(fileURLWithPath: path).absoluteString }
}

public enum DaemonError: Error, CustomStringConvertible {
    case didNotStart(log: String)
    public var description: String {
        switch self { case .didNotStart(let log): return "tonearmd did not start:\n\(log)" }
    }
}

/// Collects signals from the bus in the background for later assertions.
public final class SignalRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [(Date, DBusSignal)] = []
    private var task: Task<Void, Never>?

    /// Returns once the bus has confirmed the subscription, so no signal sent afterwards is missed.
    public init(_ connection: DBusConnection, _ rule: DBusMatchRule) async throws {
        let stream = try await connection.subscribe(rule)
        task = Task { [weak self] in
            for await signal in stream {
                self?.lock.withLock { self?.received.append((Date(), signal)) }
            }
        }
    }

    deinit { task?.cancel() }

    public var signals: [DBusSignal] { lock.withLock { received.map(\.1) } }
    public var timed: [(Date, DBusSignal)] { lock.withLock { received } }
    public func named(_ member: String) -> [DBusSignal] { signals.filter { $0.member == member } }
    public func clear() { lock.withLock { received.removeAll() } }

    /// Whether a recorded PropertiesChanged announced this PlaybackStatus (recording PropertiesChanged from before
    /// the start catches a short track that starts and ends between two looks).
    public func announced(status: String) -> Bool {
        named("PropertiesChanged").contains { $0.arguments.count > 1 && $0.arguments[1].vardictValue?["PlaybackStatus"]?.stringValue == status }
    }
}

extension Daemon {
    /// Reads a WAV the daemon rendered; when it is not one (a track that never started leaves an empty or unfinished
    /// file), records its size and the daemon's log, which say why, and throws.
    public func rendering(_ url: URL) throws -> WAV {
        do {
            return try WAV.read(url)
        } catch {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? -1
            Issue.record("\(url.lastPathComponent) is not a WAV (\(size) bytes); the daemon's log:\n\(log.suffix(6000))")
            throw error
        }
    }

    /// Waits for the end of what was queued: Playing announced (in `changes`, recorded from before the start), then
    /// Stopped. Stopped alone is also the state before the first track starts.
    public func waitForTheEnd(_ what: String, after changes: SignalRecorder, timeout: Duration = .seconds(60)) async throws {
        try await waitFor(what, timeout: timeout) {
            guard changes.announced(status: "Playing") else { return false }
            return try await status() == "Stopped"
        }
    }
}

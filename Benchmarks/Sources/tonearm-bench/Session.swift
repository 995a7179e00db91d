import DBus
import Foundation
import Synchronization
import TestSupport

/// One measurement run: a fresh private bus, fresh HOME and XDG folders, one client connection,
/// and at most one player (one or more processes). `Session.with` always tears it all down, also on errors.
final class Session: Sendable {
    static let mprisPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    let bus: PrivateBus
    let home = TemporaryDirectory("tonearm-bench-home")
    let client: DBusConnection
    /// GStreamer's plugin registry file, when it is to be shared between runs (else it is rebuilt
    /// in the fresh XDG_CACHE_HOME every time).
    let gstRegistry: String?
    /// The unprivileged user a player of this session runs as (VLC when the bench is root): the bus admits
    /// it and HOME belongs to it.
    let user: BenchUser?
    /// Every process started in this session; `close` terminates them.
    let children = Mutex<[ChildProcess]>([])
    /// The processes of the player launched last (mpd: mpd and mpDris2), for memory and CPU figures.
    let playerProcesses = Mutex<[ChildProcess]>([])
    /// mpd's TCP port on 127.0.0.1, once an mpd runs in this session.
    let mpdPort = Mutex<Int?>(nil)

    private init(gstRegistry: String?, user: BenchUser?) throws {
        self.gstRegistry = gstRegistry
        self.user = user
        bus = user == nil ? try PrivateBus.start() : try PrivateBus.start(admittingOtherUsers: true)
        Leftovers.add(home.url.path)
        Leftovers.add(Self.directory(of: bus))
        do { client = try DBusConnection.connect(address: bus.address) } catch { bus.stop(); throw error }
        _ = environment  // creates the XDG folders
        user?.own(home.url.path)
    }

    /// The private bus's folder (its address is `unix:path=FOLDER/bus`).
    private static func directory(of bus: PrivateBus) -> String {
        URL(fileURLWithPath: String(bus.address.dropFirst("unix:path=".count))).deletingLastPathComponent().path
    }

    /// A session for `player`: one whose bus and HOME admit VLC's unprivileged user when the player is VLC.
    static func with<T: Sendable>(gstRegistry: String?, for player: Player? = nil, _ body: (Session) async throws -> T) async throws -> T {
        let session = try Session(gstRegistry: gstRegistry, user: player?.user)
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }

    private func close() async {
        for child in children.withLock({ $0 }).reversed() { await child.terminate() }
        client.close()
        bus.stop()
        Leftovers.remove(Self.directory(of: bus))
        Leftovers.remove(home.url.path)  // TemporaryDirectory removes it when it goes
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SYSTEM_BUS_ADDRESS"] { env[key] = nil }
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["GST_REGISTRY"] = gstRegistry
        env["HOME"] = home.url.path
        for (key, dir) in [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                           ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime")] {
            let path = home.file(dir).path
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            env[key] = path
        }
        return env
    }

    /// Starts a program in a process group of its own (so terminating it also stops anything it started),
    /// registered for clean-up, its output in the session's `log` file. `asUser` runs it through setpriv as the
    /// session's unprivileged user.
    func spawn(_ executable: String, _ arguments: [String], log: String = "player.log", asUser: Bool = false) throws -> ChildProcess {
        var (program, args) = (executable, arguments)
        if asUser, let user {
            (program, args) = (ChildProcess.which("setpriv"), user.setprivPrefix + [executable] + arguments)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(program, args, environment: environment, captureOutput: false,
                                     outputFile: home.file(log).path, processGroup: true)
        } catch {
            throw BenchError("cannot start \(executable): \(error)")
        }
        children.withLock { $0.append(child) }
        return child
    }

    /// Runs `wait` while a watchdog checks that `child` is alive and `timeout` has not passed;
    /// whichever ends first decides. `what` names the awaited event in errors.
    static func watching<T: Sendable>(_ child: ChildProcess, _ player: Player, _ what: String, timeout: Duration,
                                      _ wait: @escaping @Sendable () async -> T?) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await wait() }
            group.addTask {
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline {
                    if !child.isRunning { throw BenchError("\(player.label) exited before \(what):\n\(child.writtenOutput.suffix(2000))") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                throw BenchError("\(player.label) did not finish \(what) within \(timeout):\n\(child.writtenOutput.suffix(2000))")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Starts `player` for `mode` and waits for its MPRIS name to appear. Returns the time from just before
    /// the first spawn to the NameOwnerChanged signal (subscribed to before spawning), and the name.
    func launch(_ player: Player, _ mode: Player.Mode, timeout: Duration = .seconds(30)) async throws -> (Duration, String) {
        let launched = try await launchAndAsk(player, mode, ask: false, timeout: timeout)
        return (launched.name, launched.busName)
    }

    /// When a launched player took its name and, with `ask`, answered a first `Get(PlaybackStatus)` sent the moment the
    /// name appeared (a player may take its name before it can answer), both from just before the first spawn.
    struct Launch {
        var name: Duration
        var answer: Duration?
        /// From the spawn until Metadata named the track (a URL or a title; with `trackNamed`, one containing it),
        /// when asked for.
        var track: Duration?
        var busName: String
    }

    func launchAndAsk(_ player: Player, _ mode: Player.Mode, ask: Bool, track: Bool = false, trackNamed: String? = nil,
                      timeout: Duration = .seconds(30)) async throws -> Launch {
        let changes = try await client.subscribe(DBusMatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                               interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        let clock = ContinuousClock()
        let start = clock.now
        let processes = try await startPrograms(player, mode)
        playerProcesses.withLock { $0 = processes }
        let result = try await Self.watching(processes.last!, player, "taking \(player.busName)", timeout: timeout) {
            for await signal in changes {
                let args = signal.arguments.map { $0.stringValue ?? "" }
                if args.count == 3, player.owns(args[0]), !args[2].isEmpty { return (clock.now, args[0]) }
            }
            return nil
        }
        guard let (appeared, name) = result else { throw BenchError("the bus connection closed while waiting for \(player.label)") }
        var launch = Launch(name: appeared - start, busName: name)
        if ask {
            _ = try await client.getProperty(destination: name, path: Self.mprisPath, interface: Self.playerInterface, name: "PlaybackStatus")
            launch.answer = clock.now - start
        }
        if track {
            // Polled as a panel widget would, every millisecond, until the track shows.
            let shown = await eventually(timeout: timeout, interval: .milliseconds(1)) { [client] in
                guard let metadata = (try? await client.getProperty(destination: name, path: Self.mprisPath, interface: Self.playerInterface,
                                                                    name: "Metadata"))?.vardictValue else { return false }
                let url = metadata["xesam:url"]?.stringValue ?? "", title = metadata["xesam:title"]?.stringValue ?? ""
                guard let trackNamed else { return !url.isEmpty || !title.isEmpty }
                return url.contains(trackNamed) || title.contains(trackNamed)
            }
            if shown { launch.track = clock.now - start }
        }
        return launch
    }

    /// The log of the player launched last, for error messages.
    var playerLog: String { String((playerProcesses.withLock { $0.first }?.writtenOutput ?? "").suffix(2000)) }

    /// Waits until the player at `name` reports PlaybackStatus "Playing".
    func waitUntilPlaying(_ name: String, timeout: Duration = .seconds(20)) async throws {
        guard try await waitForStatus(name, "Playing", timeout: timeout) else {
            throw BenchError("\(name) did not start playing within \(timeout):\n\(playerLog)")
        }
    }

    /// Waits until the player at `name` is heard: its Position past 0.2 s. A player that says Playing before its
    /// audio engine is up (tonearm answers from the first call) is still starting until then, and that start-up is
    /// not playback.
    func waitUntilHeard(_ name: String, timeout: Duration = .seconds(20)) async {
        _ = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            ((try? await client.getProperty(destination: name, path: Self.mprisPath, interface: Self.playerInterface,
                                            name: "Position"))?.int64Value ?? 0) > 200_000
        }
    }

    /// Polls PlaybackStatus until it is `status`; false on timeout.
    func waitForStatus(_ name: String, _ status: String, timeout: Duration, interval: Duration = .milliseconds(20)) async throws -> Bool {
        await eventually(timeout: timeout, interval: interval) {
            (try? await client.getProperty(destination: name, path: Self.mprisPath, interface: Self.playerInterface,
                                           name: "PlaybackStatus"))?.stringValue == status
        }
    }
}

import DBus
import Foundation
import Synchronization
import TestSupport

/// A player under test: how to start it idle or playing a file, and the MPRIS name it takes.
struct Player: Sendable {
    /// Column heading, e.g. `tonearm`.
    let label: String
    /// Its MPRIS bus name; an instance suffix (`….instance123`) is accepted too.
    let busName: String
    let executable: String
    let idleArguments: [String]
    let playArguments: @Sendable (String) -> [String]

    static func tonearm(_ tonearmd: String) -> Player {
        let sink = ["--audio-sink", "fakesink sync=true"]
        return Player(label: "tonearm", busName: "org.mpris.MediaPlayer2.tonearm", executable: tonearmd,
                      idleArguments: sink, playArguments: { sink + [$0] })
    }

    /// mpv with mpv-mpris loaded explicitly (`--no-config` skips /etc/mpv/scripts), null audio.
    static func mpv(_ mpv: String, plugin: String) -> Player {
        let common = ["--no-config", "--no-video", "--ao=null", "--script=" + plugin]
        return Player(label: "mpv", busName: "org.mpris.MediaPlayer2.mpv", executable: mpv,
                      idleArguments: common + ["--idle=yes"], playArguments: { common + ["--loop-file=inf", $0] })
    }

    func owns(_ name: String) -> Bool { name == busName || name.hasPrefix(busName + ".") }
}

/// One measurement run: a fresh private bus, fresh HOME and XDG folders, one client connection,
/// and at most one player process. `Session.with` always tears it all down, also on errors.
final class Session: Sendable {
    static let mprisPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    let bus: PrivateBus
    let home = TemporaryDirectory("tonearm-bench-home")
    let client: DBusConnection
    /// GStreamer's plugin registry file, when it is to be shared between runs (else it is rebuilt
    /// in the fresh XDG_CACHE_HOME every time).
    let gstRegistry: String?
    /// Every process started in this session; `close` terminates them.
    let children = Mutex<[ChildProcess]>([])

    private init(gstRegistry: String?) throws {
        self.gstRegistry = gstRegistry
        bus = try PrivateBus.start()
        Leftovers.add(home.url.path)
        Leftovers.add(Self.directory(of: bus))
        do { client = try DBusConnection.connect(address: bus.address) } catch { bus.stop(); throw error }
    }

    /// The private bus's folder (its address is `unix:path=FOLDER/bus`).
    private static func directory(of bus: PrivateBus) -> String {
        URL(fileURLWithPath: String(bus.address.dropFirst("unix:path=".count))).deletingLastPathComponent().path
    }

    static func with<T: Sendable>(gstRegistry: String?, _ body: (Session) async throws -> T) async throws -> T {
        let session = try Session(gstRegistry: gstRegistry)
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
        for child in children.withLock({ $0 }) { await child.terminate() }
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

    /// Starts `player` in a process group of its own (so terminating it also stops anything it started),
    /// registered for clean-up, its output in the session's player.log.
    func spawn(_ player: Player, _ arguments: [String]) throws -> ChildProcess {
        let child: ChildProcess
        do {
            child = try ChildProcess(player.executable, arguments, environment: environment, captureOutput: false,
                                     outputFile: home.file("player.log").path, processGroup: true)
        } catch {
            throw BenchError("cannot start \(player.executable): \(error)")
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

    /// Spawns `player` and waits for its MPRIS name to appear. Returns the time from just before
    /// the spawn to the NameOwnerChanged signal (subscribed to before spawning), and the name.
    func launch(_ player: Player, _ arguments: [String], timeout: Duration = .seconds(20)) async throws -> (Duration, String) {
        let changes = try await client.subscribe(DBusMatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                               interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        let clock = ContinuousClock()
        let start = clock.now
        let child = try spawn(player, arguments)
        let result = try await Self.watching(child, player, "taking \(player.busName)", timeout: timeout) {
            for await signal in changes {
                let args = signal.arguments.map { $0.stringValue ?? "" }
                if args.count == 3, player.owns(args[0]), !args[2].isEmpty { return (clock.now, args[0]) }
            }
            return nil
        }
        guard let (appeared, name) = result else { throw BenchError("the bus connection closed while waiting for \(player.label)") }
        return (appeared - start, name)
    }

    /// Waits until the player at `name` reports PlaybackStatus "Playing".
    func waitUntilPlaying(_ name: String, timeout: Duration = .seconds(20)) async throws {
        let playing = await eventually(timeout: timeout) {
            (try? await client.getProperty(destination: name, path: Self.mprisPath, interface: Self.playerInterface,
                                           name: "PlaybackStatus"))?.stringValue == "Playing"
        }
        guard playing else {
            let log = children.withLock({ $0.last })?.writtenOutput.suffix(2000) ?? ""
            throw BenchError("\(name) did not start playing within \(timeout):\n\(log)")
        }
    }
}

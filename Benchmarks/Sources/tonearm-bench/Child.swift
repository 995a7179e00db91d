import Foundation
import Synchronization

/// A player process started with posix_spawn in a process group of its own, its output appended
/// to a log file. `terminate()` stops the whole group and reaps it; anything still alive when the
/// bench exits (normally, on an error, or on SIGINT/SIGTERM) is killed by `Child.killAll()`.
final class Child: Sendable {
    let pid: pid_t
    let logPath: String
    private let reaped = Mutex(false)

    /// Spawns `executable` with `arguments` and exactly `environment`.
    init(_ executable: String, _ arguments: [String], environment: [String: String], logPath: String) throws {
        self.logPath = logPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setpgroup(&attr, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attr, argv, envp)
        guard rc == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        self.pid = pid
        Child.live.withLock { _ = $0.insert(pid) }
    }

    deinit { kill() }

    /// Whether the process has exited (reaps it if so).
    var hasExited: Bool {
        reaped.withLock { done in
            if done { return true }
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno == ECHILD) { done = true; Child.live.withLock { _ = $0.remove(pid) } }
            return done
        }
    }

    /// SIGTERM to the group, up to 2 s to exit (without blocking a thread), then SIGKILL.
    func terminate() async {
        if hasExited { return }
        _ = Foundation.kill(-pid, SIGTERM)
        for _ in 0..<200 {
            if hasExited { _ = Foundation.kill(-pid, SIGKILL); return }  // and anything left in the group
            try? await Task.sleep(for: .milliseconds(10))
        }
        kill()
    }

    /// SIGKILL to the group and reap: for deinit and errors.
    func kill() {
        reaped.withLock { done in
            if done { return }
            _ = Foundation.kill(-pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            done = true
        }
        Child.live.withLock { _ = $0.remove(pid) }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    private static let live = Mutex<Set<pid_t>>([])

    /// Kills every child still running; safe from an atexit handler.
    static func killAll() {
        let pids = live.withLock { $0 }
        for pid in pids { _ = Foundation.kill(-pid, SIGKILL); var s: Int32 = 0; _ = waitpid(pid, &s, 0) }
    }

    /// Makes sure no player outlives the bench: at exit, and on SIGINT/SIGTERM/SIGHUP (handled on
    /// a dispatch queue, then exit, so PrivateBus's own exit handler stops the buses too).
    static func installCleanup() {
        atexit {
            Child.killAll()
            Leftovers.removeAll()
        }
        signalSources = [SIGINT, SIGTERM, SIGHUP].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                Child.killAll()
                exit(128 + sig)
            }
            source.resume()
            return source
        }
    }

    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
}

/// Temporary folders to remove should the bench exit without unwinding (on SIGINT, say): the
/// sessions' HOMEs, the private buses' folders, the generated media.
enum Leftovers {
    private static let paths = Mutex<Set<String>>([])
    static func add(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    static func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }
    static func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Synchronization

/// A program started with posix_spawn and reaped with waitpid, so tests control it fully:
/// Foundation's Process spins a run loop in waitUntilExit and has been seen to hang here.
/// Optionally the child leads a process group of its own, so that signals reach anything it starts too.
/// Every live child is registered, so `killAll()` can make sure none outlives the program (from atexit, say).
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Read end of the child's stdout, when captured.
    public let stdout: Int32?
    /// Where stdout (unless captured) and stderr go, if not /dev/null.
    public let outputFile: String?
    /// Whether the child leads a process group of its own (then `signal`, `kill` and `terminate` reach the group).
    public let ownsProcessGroup: Bool
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `environment` (default: this process's); stdout is captured when `captureOutput`,
    /// else sent to `outputFile` (or /dev/null); stderr goes to `outputFile` or /dev/null; stdin is /dev/null.
    /// With `processGroup` the child starts in a new process group, led by itself.
    /// Signal dispositions and the signal mask are reset to defaults in the child (a parent's ignored SIGTERM,
    /// say, would otherwise be inherited).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                captureOutput: Bool = true, outputFile: String? = nil, processGroup: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        let output = outputFile ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            guard pipe(&pipeFDs) == 0 else { throw POSIXError(.EMFILE) }
            // Close-on-exec, so the child (and anything it starts) holds only its own stdout copy.
            _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of this process reaches the child. Tests run in parallel in one process, and a descriptor one
        // test holds (a file it is writing into an inbox, a script it just wrote) would otherwise live on in every
        // daemon or server another test starts meanwhile: an inbox file then looked open for writing for good and
        // was never imported, and snapserver failed to run its control script ("Text file busy").
        _ = Self.closeFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if processGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, env)
        if captureOutput { close(pipeFDs[1]) }
        guard rc == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .ENOENT)
        }
        pid = child
        stdout = captureOutput ? pipeFDs[0] : nil
        self.outputFile = outputFile
        ownsProcessGroup = processGroup
        Self.live.withLock { $0[child] = WeakChild(child: self) }
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module does not import.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self) }

    /// What the child has written to `outputFile` so far.
    public var writtenOutput: String {
        outputFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    }

    /// Finds a program on PATH.
    public static func which(_ name: String) -> String {
        if name.hasPrefix("/") { return name }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if access(path, X_OK) == 0 { return path }
        }
        return name
    }

    /// The exit status once the child has ended (and been reaped), else nil. Exit code, or 128 + signal number as
    /// shells report it; -1 if someone else reaped it.
    public var status: Int32? {
        let (code, reaped) = exitStatus.withLock { saved -> (Int32?, Bool) in
            if let saved { return (saved, false) }
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, WNOHANG)
            if r == pid {
                saved = Self.code(raw)
            } else if r < 0 && errno == ECHILD {
                saved = -1
            } else {
                return (nil, false)
            }
            return (saved, true)
        }
        if reaped { unregister() }
        return code
    }

    public var isRunning: Bool { status == nil }

    /// Sends `sig` to the child (to its whole group when it leads one) while it runs.
    public func signal(_ sig: Int32) {
        if isRunning { Foundation.kill(target, sig) }
    }

    /// Waits (polling, never blocking a thread) until the child ends; returns its status.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) async -> Int32? {
        _ = await eventually(timeout: timeout, interval: .milliseconds(5)) { !isRunning }
        return status
    }

    /// SIGTERM, up to `grace` to exit (waiting without blocking a thread), then SIGKILL. With a process group of
    /// its own, whatever is left in the group is killed too. Returns the exit status.
    @discardableResult
    public func terminate(grace: Duration = .seconds(2)) async -> Int32? {
        guard isRunning else { return status }
        signal(SIGTERM)
        if await wait(timeout: grace) == nil {
            signal(SIGKILL)
            await wait(timeout: .seconds(30))
        }
        // The group outlives its leader while members remain, so its id cannot have been reused yet.
        if ownsProcessGroup { _ = Foundation.kill(-pid, SIGKILL) }
        return status
    }

    /// SIGKILL (to the group when it leads one) and reap, blocking until the child is gone: for cleanup paths
    /// that cannot wait asynchronously (deinit, exit handlers).
    public func kill() {
        let reaped = exitStatus.withLock { saved -> Bool in
            guard saved == nil else { return false }
            _ = Foundation.kill(target, SIGKILL)
            var raw: Int32 = 0
            var r: pid_t
            repeat { r = waitpid(pid, &raw, 0) } while r < 0 && errno == EINTR
            saved = r == pid ? Self.code(raw) : -1
            return true
        }
        if reaped { unregister() }
    }

    /// Kills and reaps every child still running (see `kill()`); safe from an atexit handler.
    public static func killAll() {
        for child in live.withLock({ $0.values.compactMap(\.child) }) { child.kill() }
    }

    private var target: pid_t { ownsProcessGroup ? -pid : pid }

    private static func code(_ raw: Int32) -> Int32 {
        (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }

    private struct WeakChild {
        weak var child: ChildProcess?
    }

    /// The children not yet reaped, by pid.
    private static let live = Mutex<[pid_t: WeakChild]>([:])

    private func unregister() {
        Self.live.withLock { _ = $0.removeValue(forKey: pid) }
    }

    /// Reads the captured stdout to its end on a thread of its own.
    public func readAll() async -> String {
        guard let fd = stdout else { return "" }
        return await withCheckedContinuation { continuation in
            Thread {
                var data = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n > 0 { data += buffer[0..<n] } else if n < 0 && errno == EINTR { continue } else { break }
                }
                close(fd)
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }.start()
        }
    }

    deinit { kill() }
}

/// Collects a child's stdout lines as they arrive (for `--follow` style output).
public final class LineCollector: Sendable {
    private let collected = Mutex<[String]>([])

    public init(_ child: ChildProcess) {
        guard let fd = child.stdout else { return }
        Thread { [self] in
            var partial = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                partial += buffer[0..<n]
                while let nl = partial.firstIndex(of: 10) {
                    let line = String(decoding: partial[..<nl], as: UTF8.self)
                    self.collected.withLock { $0.append(line) }
                    partial.removeSubrange(...nl)
                }
            }
            close(fd)
        }.start()
    }

    public var lines: [String] { collected.withLock { $0 } }
}

/// Runs a program to completion; returns its stdout (trimmed), stderr and exit status.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws
    -> (out: String, err: String, status: Int32) {
    let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).err").path
    defer { unlink(errFile) }
    let child = try ChildProcess(ChildProcess.which(executable), arguments, environment: environment, outputFile: errFile)
    let out = await child.readAll()
    let status = await child.wait(timeout: .seconds(120)) ?? -1
    let err = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
    return (out.trimmingCharacters(in: .whitespacesAndNewlines), err, status)
}

/// Runs gst-launch-1.0 (with `-q` first in `arguments` when wanted) to make or decode test media. gst-launch 1.22 itself
/// hung once on a loaded machine (every streaming thread idle, no EOS): a run that makes no end in two minutes is
/// killed and started again, up to three times.
public func gstLaunch(_ arguments: [String]) async throws -> (out: String, err: String, status: Int32) {
    var attempt = 0
    while true {
        attempt += 1
        let result = try await runProcess("/usr/bin/timeout", ["-s", "KILL", "120", "gst-launch-1.0"] + arguments)
        if result.status == 137, attempt < 3 { continue }
        return result
    }
}

/// A media file's samples as S16LE stereo at 44.1 kHz, decoded by gst-launch through `raw` (a scratch file).
/// PCM in WAV or AIFF goes through its parser by name. Behind decodebin, gst-launch's late link of the parser's pad
/// lost a race under load: 1 decode in about 1,200 of one AIFF ended "not-linked" (8 at once, both CPUs busy).
public func decodedPCM(_ url: URL, through raw: URL) async throws -> Data {
    let reader = ["wav": "wavparse", "aiff": "aiffparse"][url.pathExtension.lowercased()] ?? "decodebin"
    let (_, err, status) = try await gstLaunch(["-q", "filesrc", "location=\(url.path)", "!", reader, "!", "audioconvert", "!",
        "audioresample", "!", "audio/x-raw,format=S16LE,channels=2,rate=44100", "!", "filesink", "location=\(raw.path)"])
    guard status == 0 else { throw TestRigError("decoding \(url.lastPathComponent) failed: \(err)") }
    return try Data(contentsOf: raw)
}

/// A setup script (scripts/web-venv, scripts/localsend-venv, scripts/upnp-venv) run once per test process, in the
/// background from its first mention; tests await what it printed (the bin folder of the venv it made).
/// It must never be waited for on a thread of Swift's pool: on a fresh machine pip takes minutes, and a blocked pool
/// thread (there are as many as CPUs) froze every other test in the process meanwhile; a daemon's track then ended
/// before its test got to press Next.
public final class SetupScript: Sendable {
    private let run: Task<String, Never>

    /// Starts `script` now.
    public init(_ script: URL) {
        run = Task { await setupScriptOutput(script) }
    }

    /// What the script printed, trimmed; "" when it could not run or failed (its errors are on this process's stderr).
    public var output: String {
        get async { await run.value }
    }
}

/// Runs a setup script to its end without holding a thread; returns its stdout, trimmed ("" when it failed).
/// Its stdout is a close-on-exec pipe, so nothing another test spawns meanwhile inherits it.
public func setupScriptOutput(_ script: URL) async -> String {
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("setup-\(UUID().uuidString).err").path
    defer { unlink(errors) }
    guard let child = try? ChildProcess(script.path, [], outputFile: errors) else { return "" }
    let out = await child.readAll()
    let status = await child.wait(timeout: .seconds(1800))
    if status != 0 {
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        FileHandle.standardError.write(Data("\(script.lastPathComponent) failed (\(status.map(String.init) ?? "no exit")):\n\(text)\n".utf8))
        return ""
    }
    return out.trimmingCharacters(in: .whitespacesAndNewlines)
}

import Foundation
import Synchronization

/// A program started with posix_spawn and reaped with waitpid, so tests control it fully:
/// Foundation's Process spins a run loop in waitUntilExit and has been seen to hang here.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Read end of the child's stdout, when captured.
    public let stdout: Int32?
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable`; stdout is captured when `captureOutput`, else sent to `outputFile` (or /dev/null);
    /// stderr goes to `outputFile` or /dev/null; stdin is /dev/null.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                captureOutput: Bool = true, outputFile: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeFDs) == 0 else { throw POSIXError(.EMFILE) }
            // Close-on-exec, so the child (and anything it starts) holds only its own stdout copy.
            _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, outputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, outputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, argv, env)
        if captureOutput { close(pipeFDs[1]) }
        guard rc == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .ENOENT)
        }
        pid = child
        stdout = captureOutput ? pipeFDs[0] : nil
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

    /// The exit status once the child has ended (and been reaped), else nil.
    public var status: Int32? {
        exitStatus.withLock { saved in
            if let saved { return saved }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            // Exit code, or 128 + signal number as shells report it.
            let code = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            saved = code
            return code
        }
    }

    public var isRunning: Bool { status == nil }

    public func signal(_ sig: Int32) {
        if isRunning { kill(pid, sig) }
    }

    /// Waits (polling, never blocking a thread) until the child ends; returns its status.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) async -> Int32? {
        _ = await eventually(timeout: timeout, interval: .milliseconds(5)) { !isRunning }
        return status
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

    deinit {
        if exitStatus.withLock({ $0 }) == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
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

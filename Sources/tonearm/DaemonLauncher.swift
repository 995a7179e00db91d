import Glibc

/// Starts tonearmd when `tonearm play` finds nobody on the bus.
enum DaemonLauncher {
    static let executableName = "tonearmd"
    /// How long to wait for the daemon's bus name.
    static let startTimeout: Duration = .seconds(10)

    /// Spawns tonearmd detached and waits until it owns its bus name.
    static func start(waitingWith client: PlayerClient) async throws {
        guard let executable = locate() else {
            throw CLIFailure.unreachable(
                "the Tonearm daemon is not running, and \(executableName) was found neither next to "
                    + "\(ownExecutable() ?? "tonearm") nor on PATH")
        }
        let pid = try spawnDetached(executable)
        let clock = ContinuousClock()
        let deadline = clock.now + startTimeout
        while clock.now < deadline {
            if try await client.isDaemonRunning() { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                // It may have handed over to an instance that won the race.
                if try await client.isDaemonRunning() { return }
                throw CLIFailure.unreachable(
                    "\(executable) \(describe(status)) before it came on the bus; "
                        + "run it in a terminal to see why")
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CLIFailure.unreachable(
            "started \(executable) (pid \(pid)), but it did not take \(PlayerClient.busName) "
                + "on the session bus within \(startTimeout.components.seconds) s")
    }

    /// tonearmd next to the running tonearm (through /proc/self/exe), else on PATH.
    static func locate() -> String? {
        if let own = ownExecutable(), let slash = own.lastIndex(of: "/") {
            let sibling = String(own[...slash]) + executableName
            if isExecutableFile(sibling) { return sibling }
        }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(executableName)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    /// The resolved path of the running executable.
    static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts `executable` in a new session with standard streams on /dev/null,
    /// default signal dispositions and the same environment.
    static func spawnDetached(_ executable: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // POSIX_SPAWN_SETSID (glibc ≥ 2.26) is a GNU extension the Glibc module may not show.
        let setsid: Int32 = 0x80
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setsid))

        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, &argv, environ)
        guard result == 0 else {
            throw CLIFailure.unreachable("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    private static func describe(_ status: Int32) -> String {
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros: decode by hand.
        let signal = status & 0x7F
        if signal == 0 { return "exited with status \((status >> 8) & 0xFF)" }
        return "was killed by signal \(signal)"
    }
}

import Foundation
import Synchronization
import XMLTree

/// A private `dbus-daemon` for tests and for headless boxes with no session bus.
///
/// The daemon runs in a process group of its own (so services it activates are stopped with it),
/// from a generated session config in a temporary directory that also holds its socket.
/// `stop()` (also called on deinit and, as a safety net, at process exit) terminates the group,
/// reaps the daemon and removes the directory.
public final class PrivateBus: Sendable {
    /// The address to connect to, e.g. `unix:path=/tmp/tonearm-bus-…/bus`.
    public let address: String
    /// The daemon's process id (also its process group id).
    public let pid: Int32
    private let directory: String
    private let stopped = Mutex(false)

    public static func start() throws -> PrivateBus {
        try start(serviceDirectories: [])
    }

    /// Starts a daemon whose D-Bus activation looks in `serviceDirectories` for `.service` files.
    public static func start(serviceDirectories: [String]) throws -> PrivateBus {
        try PrivateBus(serviceDirectories: serviceDirectories, logPath: nil, admitOtherUsers: false)
    }

    /// Like `start(serviceDirectories:)`, with the daemon's stderr (and that of the services it
    /// activates) appended to `logPath` instead of discarded.
    public static func start(serviceDirectories: [String], logPath: String?) throws -> PrivateBus {
        try PrivateBus(serviceDirectories: serviceDirectories, logPath: logPath, admitOtherUsers: false)
    }

    /// A daemon that also admits connections from other local users: its policy allows every uid, and its
    /// folder is searchable (mode 0711; the socket itself is 0777) so they can reach the socket. For a bench
    /// that runs a program refusing to run as root (VLC) as an unprivileged user on the same bus. Without
    /// it a bus admits only its own user, as dbus-daemon does by default.
    public static func start(admittingOtherUsers: Bool) throws -> PrivateBus {
        try PrivateBus(serviceDirectories: [], logPath: nil, admitOtherUsers: admittingOtherUsers)
    }

    private init(serviceDirectories: [String], logPath: String?, admitOtherUsers: Bool = false) throws {
        let dir = FileManager.default.temporaryDirectory.path + "/tonearm-bus-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: admitOtherUsers ? 0o711 : 0o700])
        // dbus-daemon admits only its own uid unless a policy rule says otherwise.
        let otherUsers = admitOtherUsers ? "    <allow user=\"*\"/>\n    " : ""
        let services = serviceDirectories.map { "  <servicedir>\(xmlEscaped($0))</servicedir>\n" }.joined()
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <listen>unix:path=\(xmlEscaped(dir))/bus</listen>
              <auth>EXTERNAL</auth>
            \(services)  <policy context="default">
            \(otherUsers)    <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <limit name="max_incoming_bytes">1000000000</limit>
              <limit name="max_outgoing_bytes">1000000000</limit>
              <limit name="max_message_size">1000000000</limit>
              <limit name="service_start_timeout">120000</limit>
              <limit name="auth_timeout">240000</limit>
              <limit name="max_completed_connections">100000</limit>
              <limit name="max_incomplete_connections">10000</limit>
              <limit name="max_connections_per_user">100000</limit>
              <limit name="max_pending_service_starts">10000</limit>
              <limit name="max_names_per_connection">50000</limit>
              <limit name="max_match_rules_per_connection">50000</limit>
              <limit name="max_replies_per_connection">50000</limit>
            </busconfig>

            """
        let configPath = dir + "/bus.conf"
        do {
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            let (pid, address) = try PrivateBus.spawn(configPath: configPath, logPath: logPath)
            self.pid = pid
            self.address = address
            self.directory = dir
            PrivateBus.live.withLock { _ = $0.insert(pid) }
            PrivateBus.installExitHandler
        } catch {
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
    }

    deinit { stop() }

    /// Stops the daemon and everything in its process group, waits for it, removes its directory.
    /// Idempotent.
    public func stop() {
        let already = stopped.withLock { s -> Bool in
            defer { s = true }
            return s
        }
        if already { return }
        PrivateBus.live.withLock { _ = $0.remove(pid) }
        PrivateBus.terminate(pid)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func terminate(_ pid: Int32) {
        _ = kill(-pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<200 {  // up to 2 s
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno == ECHILD) {
                _ = kill(-pid, SIGKILL)  // anything left in the group
                return
            }
            usleep(10_000)
        }
        _ = kill(-pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }

    private static let live = Mutex<Set<Int32>>([])
    private static let installExitHandler: Void = {
        atexit {
            let pids = PrivateBus.live.withLock { $0 }
            for pid in pids { _ = kill(-pid, SIGKILL); var s: Int32 = 0; _ = waitpid(pid, &s, 0) }
        }
    }()

    private static func findDaemon() -> String? {
        for dir in ["/usr/bin", "/bin", "/usr/local/bin"] + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where FileManager.default.isExecutableFile(atPath: dir + "/dbus-daemon") {
            return dir + "/dbus-daemon"
        }
        return nil
    }

    /// posix_spawn `dbus-daemon --config-file=… --nofork --print-address=1` in a new process
    /// group, and read the address it prints.
    private static func spawn(configPath: String, logPath: String?) throws -> (Int32, String) {
        guard let daemon = findDaemon() else { throw DBusError.noServer("dbus-daemon not found (apt install dbus-daemon)") }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DBusError.failed("pipe: errno \(errno)") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The daemon's stderr: discarded by default (as root it warns about its fd limit every time).
        posix_spawn_file_actions_addopen(&actions, 2, logPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of this process reaches the bus: a test beside this one may hold a file open for writing, and a
        // bus that lives for a whole test would keep it open (glibc 2.34's closefrom action, looked up: Swift's Glibc
        // module does not import it).
        if let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
        }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setpgroup(&attr, 0)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        sigaddset(&defaultSignals, SIGTERM)
        sigaddset(&defaultSignals, SIGINT)
        sigaddset(&defaultSignals, SIGPIPE)
        posix_spawnattr_setsigdefault(&attr, &defaultSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attr, &noSignals)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let args = [daemon, "--config-file=" + configPath, "--nofork", "--print-address=1"]
        let argv = args.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, daemon, &actions, &attr, argv, environ)
        close(writeEnd)
        guard rc == 0 else { throw DBusError.failed("posix_spawn \(daemon): error \(rc)") }

        // Read one line (the address), with a deadline.
        var data: [UInt8] = []
        let deadline = Date().addingTimeInterval(10)
        var buffer = [UInt8](repeating: 0, count: 512)
        while !data.contains(UInt8(ascii: "\n")) {
            let remaining = deadline.timeIntervalSinceNow
            var p = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(max(0, remaining) * 1000))
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { break }
            let n = read(readEnd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard !line.isEmpty else {
            terminate(pid)
            throw DBusError.noServer("dbus-daemon printed no address")
        }
        return (pid, line.trimmingCharacters(in: .whitespaces))
    }
}

import Foundation

/// Why a test server or tool could not be started, driven or read.
public struct TestRigError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A TCP port free on the loopback interface right now (bound, read, closed).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` now (a connection made and closed).
public func acceptsConnections(loopbackPort port: Int) -> Bool {
    guard let fd = connectLoopback(port: port) else { return false }
    close(fd)
    return true
}

/// A socket connected to 127.0.0.1:`port` (the caller closes it), or nil when nothing listens there.
public func connectLoopback(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else {
        close(fd)
        return nil
    }
    return fd
}

/// A GET with curl (status code and body); for the servers' own admin and status pages.
public func curl(_ url: String, user: String? = nil) async throws -> (status: Int, body: String) {
    var args = ["-s", "-m", "20", "-w", "\n%{http_code}", url]
    if let user { args = ["-u", user] + args }
    let (out, _, _) = try await runProcess("curl", args)
    let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
    return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
}

/// A real Icecast 2 server on a free loopback port, from a generated config, as an ordinary child process.
public final class Icecast: @unchecked Sendable {
    public let folder = TemporaryDirectory("tonearm-icecast")
    public let port: Int
    let process: ChildProcess
    public static let sourcePassword = "source-pw"
    public static let adminPassword = "admin-pw"
    private var sources: [ChildProcess] = []

    /// Starts icecast2 and returns once it answers. The free port it is given can be taken by another program before
    /// icecast2 binds it: then it exits, and it is started again on another port.
    public init() async throws {
        var attempt = 0
        while true {
            attempt += 1
            let port = try freeLoopbackPort()
            let process = try Self.launch(folder, port: port)
            let up = try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
                guard process.isRunning else { return true }
                return try await curl("http://127.0.0.1:\(port)/status-json.xsl").status == 200
            }
            if up, process.isRunning {
                self.port = port
                self.process = process
                return
            }
            let errors = (try? String(contentsOf: folder.file("log/error.log"), encoding: .utf8)) ?? ""
            process.kill()
            guard attempt < 3 else {
                throw TestRigError("icecast2 did not start on port \(port): \(process.writtenOutput)\n\(errors.suffix(2000))")
            }
        }
    }

    private static func launch(_ folder: TemporaryDirectory, port: Int) throws -> ChildProcess {
        let logs = folder.file("log")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        // Icecast drops root privileges when it has them: its log folder must be writable by that user.
        chmod(logs.path, 0o777)
        chmod(folder.url.path, 0o755)
        let root = geteuid() == 0 ? "<changeowner><user>nobody</user><group>nogroup</group></changeowner>" : ""
        let config = """
            <icecast>
              <limits><clients>50</clients><sources>8</sources><burst-on-connect>1</burst-on-connect><burst-size>\(Self.burstSize)</burst-size><source-timeout>10</source-timeout></limits>
              <authentication><source-password>\(Self.sourcePassword)</source-password><admin-user>admin</admin-user><admin-password>\(Self.adminPassword)</admin-password></authentication>
              <hostname>127.0.0.1</hostname>
              <listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>
              <paths><basedir>/usr/share/icecast2</basedir><logdir>\(logs.path)</logdir><webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
              <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
              <security><chroot>0</chroot>\(root)</security>
            </icecast>
            """
        let file = folder.file("icecast.xml")
        try config.write(to: file, atomically: true, encoding: .utf8)
        return try ChildProcess(ChildProcess.which("icecast2"), ["-c", file.path], captureOutput: false,
                                outputFile: folder.file("icecast.out").path)
    }

    deinit {
        for source in sources { source.kill() }
        process.kill()
    }

    public func url(_ mount: String) -> String { "http://127.0.0.1:\(port)\(mount)" }

    /// A live MP3 source (a sine, through lamemp3enc) pushed by GStreamer's shout2send; returns once Icecast lists the
    /// mount. `constantBitrate`: 128 kbit/s throughout, as stations send (else the encoder's average, about 53 kbit/s
    /// for a sine); Icecast hands data on in blocks of 4 KiB, so a listener's first bytes come in steps of a block's
    /// time, 0.26 s at 128 kbit/s against 0.6 s.
    public func startMP3Source(mount: String, station: String, frequency: Int = 440, constantBitrate: Bool = false) async throws {
        let args = ["-q", "audiotestsrc", "is-live=true", "freq=\(frequency)", "volume=0.5", "!", "audioconvert", "!",
                    "lamemp3enc", "target=bitrate", "bitrate=128", "cbr=\(constantBitrate)", "!",
                    "shout2send", "ip=127.0.0.1", "port=\(port)", "password=\(Self.sourcePassword)", "mount=\(mount)", "streamname=\(station)"]
        try await startSource(args, mount: mount)
    }

    /// Any source client's arguments for gst-launch-1.0.
    public func startSource(_ gstArguments: [String], mount: String) async throws {
        let source = try ChildProcess(ChildProcess.which("gst-launch-1.0"), gstArguments, captureOutput: false,
                                      outputFile: folder.file("source\(sources.count).out").path)
        sources.append(source)
        try await waitForMount(mount)
    }

    /// Starts ezstream (the real source client) on `config`; returns once the mount is listed.
    public func startEzstream(config: URL, mount: String) async throws {
        let source = try ChildProcess(ChildProcess.which("ezstream"), ["-c", config.path], captureOutput: false,
                                      outputFile: folder.file("ezstream.out").path)
        sources.append(source)
        try await waitForMount(mount)
    }

    public func waitForMount(_ mount: String) async throws {
        let listed = try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            try await curl("http://127.0.0.1:\(self.port)/status-json.xsl").body.contains("\"listenurl\":\"http://127.0.0.1:\(self.port)\(mount)\"")
        }
        guard listed else { throw TestRigError("the source never reached icecast: \(sources.last?.writtenOutput ?? "")") }
    }

    /// How much of a mount's latest stream Icecast sends a new listener at once (its default, set explicitly).
    public static let burstSize = 65536

    /// Returns once Icecast has read a whole burst from `mount`'s source: from then on every listener starts with the
    /// same burst, the first as the last (a listener that comes earlier gets less and waits for the rest in real time).
    public func waitForFullBurst(_ mount: String) async throws {
        let full = try await eventually(timeout: .seconds(60), interval: .milliseconds(250)) {
            let stats = try await curl("http://127.0.0.1:\(self.port)/admin/stats", user: "admin:\(Self.adminPassword)").body
            guard let source = stats.range(of: "<source mount=\"\(mount)\">"),
                  let field = stats[source.upperBound...].range(of: "<total_bytes_read>") else { return false }
            let digits = stats[field.upperBound...].prefix { $0.isNumber }
            return (Int(digits) ?? 0) >= Self.burstSize
        }
        guard full else { throw TestRigError("\(mount) never filled Icecast's burst of \(Self.burstSize) bytes") }
    }

    /// Stops every source client (the mount goes away: listeners see the stream close).
    public func stopSources() {
        for source in sources { source.kill() }
        sources = []
    }

    /// Pushes a new song title through Icecast's admin metadata update (what a source client does for MP3 streams).
    public func setTitle(_ song: String, mount: String) async throws {
        let encoded = song.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? song
        let (status, body) = try await curl("http://127.0.0.1:\(port)/admin/metadata?mount=\(mount)&mode=updinfo&song=\(encoded)",
                                            user: "admin:\(Self.adminPassword)")
        guard status == 200, body.contains("Metadata update successful") else { throw TestRigError("metadata update: \(status) \(body)") }
    }
}


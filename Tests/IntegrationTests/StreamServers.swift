import Foundation
import TestSupport
import Testing

/// A TCP port free on the loopback interface right now (bound, read, closed).
func freeLoopbackPort() throws -> Int {
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

/// A GET with curl (status code and body); for the servers' own admin and status pages.
func curl(_ url: String, user: String? = nil) async throws -> (status: Int, body: String) {
    var args = ["-s", "-m", "20", "-w", "\n%{http_code}", url]
    if let user { args = ["-u", user] + args }
    let (out, _, _) = try await runProcess("curl", args)
    let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
    return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
}

/// A real Icecast 2 server on a free loopback port, from a generated config, as an ordinary child process.
final class Icecast: @unchecked Sendable {
    let folder = TemporaryDirectory("tonearm-icecast")
    let port: Int
    let process: ChildProcess
    static let sourcePassword = "source-pw"
    static let adminPassword = "admin-pw"
    private var sources: [ChildProcess] = []

    init() async throws {
        port = try freeLoopbackPort()
        let logs = folder.file("log")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        // Icecast drops root privileges when it has them: its log folder must be writable by that user.
        chmod(logs.path, 0o777)
        chmod(folder.url.path, 0o755)
        let root = geteuid() == 0 ? "<changeowner><user>nobody</user><group>nogroup</group></changeowner>" : ""
        let config = """
            <icecast>
              <limits><clients>50</clients><sources>8</sources><burst-on-connect>1</burst-on-connect><source-timeout>10</source-timeout></limits>
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
        process = try ChildProcess(ChildProcess.which("icecast2"), ["-c", file.path], captureOutput: false,
                                   outputFile: folder.file("icecast.out").path)
        let up = try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            try await curl("http://127.0.0.1:\(self.port)/status-json.xsl").status == 200
        }
        try #require(up, "icecast2 did not start: \(process.writtenOutput)")
    }

    deinit {
        for source in sources { source.kill() }
        process.kill()
    }

    func url(_ mount: String) -> String { "http://127.0.0.1:\(port)\(mount)" }

    /// A live MP3 source (a sine, through lamemp3enc) pushed by GStreamer's shout2send; returns once Icecast lists the
    /// mount.
    func startMP3Source(mount: String, station: String, frequency: Int = 440) async throws {
        let args = ["-q", "audiotestsrc", "is-live=true", "freq=\(frequency)", "volume=0.5", "!", "audioconvert", "!",
                    "lamemp3enc", "target=bitrate", "bitrate=128", "!",
                    "shout2send", "ip=127.0.0.1", "port=\(port)", "password=\(Self.sourcePassword)", "mount=\(mount)", "streamname=\(station)"]
        try await startSource(args, mount: mount)
    }

    /// Any source client's arguments for gst-launch-1.0.
    func startSource(_ gstArguments: [String], mount: String) async throws {
        let source = try ChildProcess(ChildProcess.which("gst-launch-1.0"), gstArguments, captureOutput: false,
                                      outputFile: folder.file("source\(sources.count).out").path)
        sources.append(source)
        try await waitForMount(mount)
    }

    /// Starts ezstream (the real source client) on `config`; returns once the mount is listed.
    func startEzstream(config: URL, mount: String) async throws {
        let source = try ChildProcess(ChildProcess.which("ezstream"), ["-c", config.path], captureOutput: false,
                                      outputFile: folder.file("ezstream.out").path)
        sources.append(source)
        try await waitForMount(mount)
    }

    func waitForMount(_ mount: String) async throws {
        let listed = try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            try await curl("http://127.0.0.1:\(self.port)/status-json.xsl").body.contains("\"listenurl\":\"http://127.0.0.1:\(self.port)\(mount)\"")
        }
        try #require(listed, "the source never reached icecast: \(sources.last?.writtenOutput ?? "")")
    }

    /// Stops every source client (the mount goes away: listeners see the stream close).
    func stopSources() {
        for source in sources { source.kill() }
        sources = []
    }

    /// Pushes a new song title through Icecast's admin metadata update (what a source client does for MP3 streams).
    func setTitle(_ song: String, mount: String) async throws {
        let encoded = song.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? song
        let (status, body) = try await curl("http://127.0.0.1:\(port)/admin/metadata?mount=\(mount)&mode=updinfo&song=\(encoded)",
                                            user: "admin:\(Self.adminPassword)")
        try #require(status == 200 && body.contains("Metadata update successful"), "metadata update: \(status) \(body)")
    }
}

/// A small HTTP server for the tests (python3's standard library, which has no Range support of its own): files with
/// Range requests, playlists, and faults — 404, 500, a redirect loop, a live stream that closes, one that stalls.
final class TestHTTPServer: @unchecked Sendable {
    let folder = TemporaryDirectory("tonearm-http")
    let process: ChildProcess
    let port: Int

    /// Serves the files of `root`.
    init(root: URL, liveFile: URL? = nil) async throws {
        let script = folder.file("server.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let portFile = folder.file("port")
        process = try ChildProcess(ChildProcess.which("python3"), [script.path, root.path, portFile.path, folder.file("requests.log").path, liveFile?.path ?? ""],
                                   captureOutput: false, outputFile: folder.file("server.out").path)
        let ready = try await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } != nil
        }
        try #require(ready, "the test HTTP server did not start: \(process.writtenOutput)")
        port = Int(try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
    }

    deinit { process.kill() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests served so far: one line each, "METHOD PATH RANGE".
    var requests: [String] {
        ((try? String(contentsOf: folder.file("requests.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static let script = #"""
    import os, sys, time, threading
    from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

    root, port_file, log_file, live_file = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    lock = threading.Lock()
    TYPES = {".wav": "audio/x-wav", ".ogg": "audio/ogg", ".mp3": "audio/mpeg", ".m3u": "audio/x-mpegurl",
             ".m3u8": "audio/x-mpegurl", ".pls": "audio/x-scpls", ".xspf": "application/xspf+xml"}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def note(self):
            with lock:
                with open(log_file, "a") as f:
                    f.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Range", "-")))
        def do_HEAD(self): self.do_GET(body=False)
        def do_GET(self, body=True):
            self.note()
            p = self.path.split("?")[0]
            if p == "/404": return self.plain(404, b"no such thing\n")
            if p == "/500": return self.plain(500, b"broken\n")
            if p == "/loop": return self.redirect("/loop2")
            if p == "/loop2": return self.redirect("/loop")
            if p.startswith("/redirect/"): return self.redirect("/" + p[len("/redirect/"):])
            if p in ("/live-closes", "/live-stalls", "/live-silent"): return self.live(p)
            return self.file(p, body)
        def plain(self, code, data):
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        def redirect(self, target):
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
        def live(self, kind):
            # An Icecast-like live MP3 stream without a length: closes after a while, stalls, or never sends data.
            self.close_connection = True
            self.protocol_version = "HTTP/1.0"
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("icy-name", "Fault Radio")
            self.end_headers()
            if kind == "/live-silent":
                time.sleep(120); return
            data = open(live_file, "rb").read()
            limit = len(data) if kind == "/live-closes" else len(data) // 2
            sent = 0
            try:
                while sent < limit:
                    chunk = data[sent:sent + 4096]
                    self.wfile.write(chunk); self.wfile.flush()
                    sent += len(chunk)
                    time.sleep(0.02)
                if kind == "/live-stalls":
                    time.sleep(120)
            except (BrokenPipeError, ConnectionResetError):
                pass
        def file(self, p, body):
            path = os.path.realpath(os.path.join(root, p.lstrip("/")))
            if not path.startswith(os.path.realpath(root)) or not os.path.isfile(path):
                return self.plain(404, b"not found\n")
            size = os.path.getsize(path)
            start, end, code = 0, size - 1, 200
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                a, _, b = rng[6:].split(",")[0].partition("-")
                if a: start = int(a); end = int(b) if b else size - 1
                else: start = max(0, size - int(b))
                end = min(end, size - 1)
                if start >= size:
                    self.send_response(416); self.send_header("Content-Range", "bytes */%d" % size)
                    self.send_header("Content-Length", "0"); self.end_headers(); return
                code = 206
            self.send_response(code)
            self.send_header("Content-Type", TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream"))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(end - start + 1))
            if code == 206: self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            self.end_headers()
            if not body: return
            with open(path, "rb") as f:
                f.seek(start)
                left = end - start + 1
                try:
                    while left > 0:
                        chunk = f.read(min(65536, left))
                        if not chunk: break
                        self.wfile.write(chunk); left -= len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f: f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#
}

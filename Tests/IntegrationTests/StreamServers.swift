import Foundation
import TestSupport
import Testing

/// A small HTTP server for the tests (python3's standard library, which has no Range support of its own): files with
/// Range requests, playlists, and faults — 404, 500, a redirect loop, a live stream that closes, one that stalls, a
/// server that never answers its headers — and a live Ogg stream of chains. The script's `time.sleep` calls are how
/// those faults behave (a slow, stalled or silent server), not the tests waiting for something.
final class TestHTTPServer: @unchecked Sendable {
    let folder = TemporaryDirectory("tonearm-http")
    let process: ChildProcess
    let port: Int
    let scheme: String

    /// Serves the files of `root`; over https with `tls` (a certificate for 127.0.0.1 and its key).
    init(root: URL, liveFile: URL? = nil, tls: TestPKI? = nil) async throws {
        scheme = tls == nil ? "http" : "https"
        let script = folder.file("server.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let portFile = folder.file("port")
        process = try ChildProcess(ChildProcess.which("python3"), [script.path, root.path, portFile.path, folder.file("requests.log").path, liveFile?.path ?? "",
                                                                   tls.map { "\($0.serverCertificate.path),\($0.serverKey.path)" } ?? ""],
                                   captureOutput: false, outputFile: folder.file("server.out").path)
        let ready = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } != nil
        }
        try #require(ready, "the test HTTP server did not start: \(process.writtenOutput)")
        port = Int(try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
    }

    deinit { process.kill() }

    func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    /// The requests served so far: one line each, "METHOD PATH RANGE".
    var requests: [String] {
        ((try? String(contentsOf: folder.file("requests.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The requests that named a whole URL, as a proxy is asked: one line each, "URL USER-AGENT".
    var proxied: [String] {
        ((try? String(contentsOf: folder.file("proxied.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static let script = #"""
    import os, sys, time, threading
    from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

    root, port_file, log_file, live_file, tls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
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
            if p.startswith("http://"):
                # Asked as a proxy: noted with the client's User-Agent, then served from the files as the origin would.
                with lock:
                    with open(os.path.join(os.path.dirname(log_file), "proxied.log"), "a") as f:
                        f.write("%s %s\n" % (p, self.headers.get("User-Agent", "-")))
                p = "/" + p.split("/", 3)[3] if p.count("/") >= 3 else "/"
            if p == "/404": return self.plain(404, b"no such thing\n")
            if p == "/500": return self.plain(500, b"broken\n")
            if p == "/loop": return self.redirect("/loop2")
            if p == "/loop2": return self.redirect("/loop")
            if p.startswith("/redirect/"): return self.redirect("/" + p[len("/redirect/"):])
            if p in ("/live-closes", "/live-stalls", "/live-silent", "/live-slow", "/live-ogg"): return self.live(p)
            if p == "/station":
                # A station's playlist under a name that does not say so (as directories' "listen" links are).
                entry = "http://%s/live-closes" % self.headers.get("Host", "")
                return self.plain(200, ("[playlist]\nNumberOfEntries=1\nFile1=%s\nVersion=2\n" % entry).encode(), "audio/x-scpls")
            if p == "/slow-headers":
                # Accepts the connection, reads the request and says nothing for two minutes.
                time.sleep(120); return
            return self.file(p, body)
        def plain(self, code, data, kind="text/plain"):
            self.send_response(code)
            self.send_header("Content-Type", kind)
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
            # /live-ogg is the live file as an Ogg stream (its chains one after the other) that closes at its end.
            self.close_connection = True
            self.protocol_version = "HTTP/1.0"
            self.send_response(200)
            self.send_header("Content-Type", "audio/ogg" if kind == "/live-ogg" else "audio/mpeg")
            self.send_header("icy-name", "Chain Radio" if kind == "/live-ogg" else "Fault Radio")
            self.end_headers()
            if kind == "/live-silent":
                time.sleep(120); return
            data = open(live_file, "rb").read()
            limit = len(data) if kind in ("/live-closes", "/live-ogg") else len(data) // 2
            sent = 0
            try:
                if kind == "/live-slow":
                    # 3 s of a 128 kb/s stream at once, then the rest at half the speed it plays: the buffer runs dry
                    # and fills again, over and over.
                    self.wfile.write(data[:48000]); self.wfile.flush()
                    sent = 48000
                    while sent < len(data):
                        self.wfile.write(data[sent:sent + 4000]); self.wfile.flush()
                        sent += 4000
                        time.sleep(0.5)
                    return
                # /live-stalls at about twice a 128 kb/s stream's pace: GStreamer measures its buffer in seconds of
                # the rate data comes in at, so a much faster burst would never count as a full buffer.
                pause = 0.125 if kind == "/live-stalls" else 0.02
                while sent < limit:
                    chunk = data[sent:sent + 4096]
                    self.wfile.write(chunk); self.wfile.flush()
                    sent += len(chunk)
                    time.sleep(pause)
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

    class TLSServer(ThreadingHTTPServer):
        # The handshake happens on the first read, in the connection's own thread: a client that never completes it
        # holds only that thread.
        def get_request(self):
            sock, address = self.socket.accept()
            return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    if tls:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls.split(","))
        server = TLSServer(("127.0.0.1", 0), Handler)
    else:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f: f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#
}

/// A certificate authority made for one test and a server certificate for 127.0.0.1 it signed (openssl).
struct TestPKI {
    let folder = TemporaryDirectory("tonearm-pki")
    var caFile: URL { folder.file("ca.pem") }
    var serverCertificate: URL { folder.file("server.pem") }
    var serverKey: URL { folder.file("server.key") }

    init() async throws {
        let f = folder
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(to: f.file("server.ext"), atomically: true, encoding: .utf8)
        for step in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Tonearm Test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-keyout", f.file("ca.key").path, "-out", f.file("ca.pem").path],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f.file("server.key").path,
             "-out", f.file("server.csr").path],
            ["x509", "-req", "-in", f.file("server.csr").path, "-CA", f.file("ca.pem").path, "-CAkey", f.file("ca.key").path,
             "-CAcreateserial", "-days", "2", "-extfile", f.file("server.ext").path, "-out", f.file("server.pem").path],
        ] {
            let made = try await runProcess("/usr/bin/openssl", step)
            try #require(made.status == 0, "openssl \(step.first ?? ""): \(made.err)")
        }
    }
}

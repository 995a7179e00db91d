import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The real daemon as a LocalSend device inside a network namespace of its own (`unshare -rn`: only loopback,
/// multicast on it and a 224.0.0.0/4 route), and LocalSend senders run in the same namespace with `nsenter`:
/// nothing leaves the namespace's loopback.
final class LocalSendRig: @unchecked Sendable {
    let d: Daemon
    let bin: String
    let received: URL
    let rejected: URL
    let staging: URL
    let out: URL
    let recorder: SignalRecorder

    /// The pinned third-party LocalSend implementations (scripts/localsend-venv makes them once).
    static let root = NetworkNamespace.root
    static let venv = SetupScript(root.appendingPathComponent("scripts/localsend-venv"))

    /// Starts tonearmd with `[plugins.localsend]` set from `config` (enabled; alias "Tonearm test").
    /// `before` runs once the folders are known and before the daemon starts (to seed its storage).
    init(_ config: String, extra: String = "", sink: Bool = true, before: (Daemon) async throws -> Void = { _ in }) async throws {
        d = try Daemon()
        bin = await Self.venv.output
        try #require(FileManager.default.isExecutableFile(atPath: bin + "/localsendd"), "scripts/localsend-venv did not make the venv")
        let music = d.home.url.appendingPathComponent("Music")
        received = music.appendingPathComponent("Received")
        rejected = music.appendingPathComponent("Rejected")
        staging = d.home.url.appendingPathComponent("data/tonearm/localsend/staging")
        out = d.media.file("rendered.wav")
        let file = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try """
            [plugins.shares]
            inboxes = ["\(music.appendingPathComponent("Inbox").path)"]
            \(extra)
            [plugins.localsend]
            enabled = true
            alias = "Tonearm test"
            \(config)
            """.write(to: file, atomically: true, encoding: .utf8)
        NetworkNamespace.isolate(d)
        recorder = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.tonearm.Shares1"))
        try await before(d)
        try await d.start(sink: sink ? "wavenc ! filesink location=\(out.path)" : "fakesink sync=true")
        try await d.waitFor("the LocalSend server", timeout: .seconds(60)) { d.log.contains("LocalSend: \"Tonearm test\" on port") }
    }

    /// The daemon's environment less the CA bundle variables (with them, requests checks the self-signed certificate).
    var clientEnvironment: [String: String] {
        var env = d.environment
        for key in ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"] { env[key] = nil }
        env["XDG_RUNTIME_DIR"] = d.home.file("run").path
        env["PYTHONUNBUFFERED"] = "1"
        return env
    }

    /// Runs a program in the daemon's network namespace.
    func inside(_ program: String, _ arguments: [String]) async throws -> (out: String, err: String, status: Int32) {
        try FileManager.default.createDirectory(at: d.home.file("run"), withIntermediateDirectories: true)
        return try await NetworkNamespace.run(in: d, program, arguments, environment: clientEnvironment)
    }

    /// Starts a long-running program in the namespace (localsendd); the caller ends it.
    func spawn(_ program: String, _ arguments: [String], log: String) throws -> ChildProcess {
        try FileManager.default.createDirectory(at: d.home.file("run"), withIntermediateDirectories: true)
        return try NetworkNamespace.spawn(in: d, program, arguments, log: log, environment: clientEnvironment)
    }

    /// One raw request through `probe.py` (the protocol's edge cases no well-behaved client makes).
    func probe(_ arguments: [String]) async throws -> (status: Int, body: [String: Any]) {
        let result = try await inside(bin + "/python", [try probeScriptPath()] + arguments)
        guard let data = result.out.split(separator: "\n").last.map({ Data($0.utf8) }),
              let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            Issue.record("probe \(arguments) printed \(result.out) \(result.err)")
            return (-1, [:])
        }
        return (json["status"] as? Int ?? -1, json["body"] as? [String: Any] ?? [:])
    }

    /// A request through `probe.py` left running, for a sender the test makes vanish (kill it).
    func spawnProbe(_ arguments: [String], log: String) throws -> ChildProcess {
        try spawn(bin + "/python", [try probeScriptPath()] + arguments, log: log)
    }

    private func probeScriptPath() throws -> String {
        let script = d.home.file("probe.py")
        if !FileManager.default.fileExists(atPath: script.path) { try Self.probeScript.write(to: script, atomically: true, encoding: .utf8) }
        return script.path
    }

    func files(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// FromDevice signals as (sender, file name, uri, reason).
    var fromDevice: [(sender: String, fingerprint: String, name: String, uri: String, reason: String)] {
        recorder.named("FromDevice").map {
            let a = $0.arguments.map { $0.stringValue ?? "" }
            return (a[0], a[2], a[3], a[4], a[5])
        }
    }

    /// A short WAV song whose bytes depend on `seed`.
    func song(_ name: String, seed: Int, seconds: Double = 0.6) throws -> String {
        let url = d.media.file(name)
        try WAV.sine(frequency: 300 + Double(seed * 50), seconds: seconds, sampleRate: 11025, channels: 1).write(to: url)
        return url.path
    }

    /// Requests as a misbehaving or hand-driven sender makes them. Prints {"status", "body"} as its last line.
    static let probeScript = #"""
        import argparse, hashlib, http.client, json, socket, ssl, sys, time
        p = argparse.ArgumentParser()
        p.add_argument("method"); p.add_argument("path")
        p.add_argument("--port", type=int, default=53317)
        p.add_argument("--json", default=None)
        p.add_argument("--file", default=None)
        p.add_argument("--extra", type=int, default=0, help="bytes more than the file")
        p.add_argument("--short", type=int, default=0, help="bytes fewer than the file")
        p.add_argument("--chunked", action="store_true")
        p.add_argument("--stall", action="store_true", help="send half the body, then wait for the server to close")
        p.add_argument("--source", default=None, help="source address (127.0.0.x)")
        p.add_argument("--http", action="store_true")
        a = p.parse_args()
        ctx = ssl._create_unverified_context()
        src = (a.source, 0) if a.source else None
        conn = (http.client.HTTPConnection("127.0.0.1", a.port, timeout=120, source_address=src) if a.http else
                http.client.HTTPSConnection("127.0.0.1", a.port, timeout=120, context=ctx, source_address=src))
        body = None
        headers = {}
        if a.json is not None:
            body = a.json.encode(); headers["Content-Type"] = "application/json"
        if a.file:
            body = open(a.file, "rb").read()
            body = body[:len(body) - a.short] + b"\0" * a.extra
        try:
            if a.stall:
                conn.putrequest(a.method, a.path)
                conn.putheader("Content-Length", str(len(body)))
                conn.endheaders()
                conn.send(body[:len(body) // 2])
                try:
                    r = conn.getresponse(); print(json.dumps({"status": r.status, "body": {"raw": r.read().decode(errors="replace")}}))
                except Exception as e:
                    print(json.dumps({"status": 0, "body": {"closed": str(e)}}))
                sys.exit(0)
            if a.chunked:
                def chunks():
                    for i in range(0, len(body), 7000):
                        yield body[i:i + 7000]
                conn.request(a.method, a.path, body=chunks(), headers=headers, encode_chunked=True)
            else:
                conn.request(a.method, a.path, body=body, headers=headers)
            r = conn.getresponse()
            raw = r.read()
            try:
                parsed = json.loads(raw) if raw else {}
            except ValueError:
                parsed = {"raw": raw.decode(errors="replace")}
            print(json.dumps({"status": r.status, "body": parsed}))
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            print(json.dumps({"status": 0, "body": {"closed": str(e)}}))
        """#
}

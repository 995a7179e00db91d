import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The real daemon as a UPnP media renderer inside a network namespace of its own, with Debian's minidlna serving
/// generated music in the same namespace, and async-upnp-client (pinned in scripts/upnp-venv) as the control point:
/// discovery, SOAP and GENA all cross real sockets, and nothing leaves the namespace's loopback.
final class UPnPRig: @unchecked Sendable {
    let d: Daemon
    let python: String
    let controlPoint: String
    /// Where the renderer's description is, once found by M-SEARCH.
    private(set) var location = ""
    /// The folder minidlna serves.
    let served: URL
    let out: URL
    /// minidlna, kept for the rig's life.
    private var mediaServerProcess: ChildProcess?
    static let mediaServer = "http://127.0.0.1:8200/rootDesc.xml"

    static let venv = SetupScript(NetworkNamespace.root.appendingPathComponent("scripts/upnp-venv"))

    /// Starts tonearmd with `[plugins.upnp]` on (port 0, named "Tonearm test") plus `config`; `media` is written into
    /// the served folder before minidlna starts (nil: no media server).
    init(_ config: String = "", sink: String? = nil, media: ((URL) async throws -> Int)? = nil) async throws {
        d = try Daemon()
        python = await Self.venv.output + "/python"
        controlPoint = NetworkNamespace.root.appendingPathComponent("Tests/IntegrationTests/upnp/controlpoint.py").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "scripts/upnp-venv did not make the venv")
        served = d.home.url.appendingPathComponent("served")
        out = d.media.file("rendered.wav")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let items = try await media?(served)
        try d.writeConfig("""
            [plugins.upnp]
            enabled = true
            name = "Tonearm test"
            port = 0
            \(config)
            """)
        NetworkNamespace.isolate(d)
        try await d.start(sink: sink ?? "wavenc ! filesink location=\(out.path)")
        try await d.waitFor("the renderer", timeout: .seconds(60)) { d.log.contains("is a media renderer at") }
        if let items {
            mediaServerProcess = try spawn(NetworkNamespace.root.appendingPathComponent("scripts/upnp-minidlna").path,
                          [served.path, "8200", d.home.file("minidlna").path], log: "minidlna.log")
            // minidlna takes a moment to listen, then to scan.
            try await d.waitFor("minidlna to list the music", timeout: .seconds(90)) { (try? await browse(minimum: items)) != nil }
        }
        let found = try await controlPointJSON(["discover", "--timeout", "60", "--first"])
        let devices = found["devices"] as? [[String: Any]] ?? []
        location = try #require(devices.first { $0["friendlyName"] as? String == "Tonearm test" }?["location"] as? String,
                                "M-SEARCH found \(devices)")
    }

    var environment: [String: String] {
        var env = d.environment
        env["PYTHONUNBUFFERED"] = "1"
        return env
    }

    /// Runs the control point in the namespace; its last JSON line.
    func controlPointJSON(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await NetworkNamespace.run(in: d, python, [controlPoint] + arguments, environment: environment)
        guard let line = result.out.split(separator: "\n").last,
              let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw UPnPFault(code: -1, description: "control point \(arguments) printed \(result.out) \(result.err)")
        }
        return json
    }

    /// Invokes an action; its out-arguments as strings, or throws the fault.
    @discardableResult
    func call(_ service: String, _ action: String, _ arguments: [String: String] = [:]) async throws -> [String: String] {
        let json = try await controlPointJSON(["call", location, service, action] + arguments.sorted { $0.key < $1.key }.map { "\($0)=\($1)" })
        if let result = json["result"] as? [String: Any] { return result.mapValues { "\($0)" } }
        throw UPnPFault(code: json["error"] as? Int ?? -1, description: json["description"] as? String ?? "\(json)")
    }

    /// The media server's items, once it lists at least `minimum`.
    func browse(minimum: Int) async throws -> [[String: Any]] {
        let json = try await controlPointJSON(["browse", Self.mediaServer, "--min-items", String(minimum), "--timeout", "60"])
        guard let items = json["items"] as? [[String: Any]], items.count >= minimum else {
            let log = (try? String(contentsOf: d.home.file("minidlna.log"), encoding: .utf8)) ?? ""
            throw UPnPFault(code: -1, description: "minidlna listed \(json); its log: \(log.suffix(2000))")
        }
        return items
    }

    /// The served item titled `title`: its URL and DIDL-Lite.
    func item(_ title: String) async throws -> (url: String, didl: String) {
        let items = try await browse(minimum: 1)
        let item = try #require(items.first { $0["title"] as? String == title }, "minidlna lists \(items.map { $0["title"] ?? "" })")
        return (item["url"] as? String ?? "", item["didl"] as? String ?? "")
    }

    /// A subscriber that prints each event into `log` until ended.
    func subscribe(_ service: String, log: String, timeout: Int = 300) throws -> ChildProcess {
        try spawn(python, [controlPoint, "subscribe", location, service, "--timeout", String(timeout)], log: log)
    }

    /// The events a subscriber printed so far, LastChange read into its variables.
    func events(_ log: String) -> [[String: String]] {
        let text = (try? String(contentsOf: d.home.file(log), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], json["event"] != nil else { return nil }
            return (json["LastChange"] as? [String: Any] ?? json["vars"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
        }
    }

    func spawn(_ program: String, _ arguments: [String], log: String) throws -> ChildProcess {
        try NetworkNamespace.spawn(in: d, program, arguments, log: log, environment: environment)
    }

    /// A raw HTTP request with curl in the namespace: status and body.
    func curl(_ method: String, _ url: String, headers: [String] = [], body: URL? = nil) async throws -> (status: Int, body: String) {
        var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, "--max-time", "60"]
        for h in headers { arguments += ["-H", h] }
        if let body { arguments += ["--data-binary", "@" + body.path] }
        let result = try await NetworkNamespace.run(in: d, "/usr/bin/curl", arguments + [url], environment: environment)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// The renderer's base URL (http://127.0.0.1:PORT).
    var base: String {
        guard let url = URL(string: location), let host = url.host, let port = url.port else { return location }
        return "http://\(host):\(port)"
    }

    /// A SOAP envelope calling `action` with `arguments` in order.
    static func envelope(_ service: String, _ action: String, _ arguments: [(String, String)]) -> String {
        "<?xml version=\"1.0\"?><s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body>"
            + "<u:\(action) xmlns:u=\"urn:schemas-upnp-org:service:\(service):1\">"
            + arguments.map { "<\($0.0)>\($0.1)</\($0.0)>" }.joined() + "</u:\(action)></s:Body></s:Envelope>"
    }
}

/// A UPnP error a call answered with.
struct UPnPFault: Error, CustomStringConvertible {
    var code: Int
    var description: String
}

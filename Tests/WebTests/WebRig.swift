import AsyncHTTPClient
import DaemonHarness
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TestSupport
import Testing
import WSClient

/// The real daemon on a private bus with its web face on a free port, and an HTTP client for it.
struct WebRig {
    let daemon: Daemon
    /// "http://127.0.0.1:PORT".
    let base: String

    /// Starts the daemon (config `config`, files `files`) and waits until the web face listens.
    static func start(_ files: [String] = [], config: String? = nil, daemon: Daemon? = nil) async throws -> WebRig {
        let d = try daemon ?? Daemon()
        if let config { try d.writeConfig(config) }
        try await d.start(files)
        var address = ""
        try await d.waitFor("the web face to listen") {
            address = try await d.get("org.tonearm.Player1", "WebAddress").stringValue ?? ""
            return !address.isEmpty
        }
        return WebRig(daemon: d, base: String(address.dropLast()))
    }

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        /// The body as a JSON object (empty when it is not one).
        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
        var array: [Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [Any] ?? [] }
        var contentType: String { headers["content-type"].first ?? "" }
    }

    /// One request; `body` is sent as JSON.
    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, _ body: String? = nil, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        // A connection per request: one kept in the client's pool past the server's idle timeout would be closed
        // under it.
        request.headers.replaceOrAdd(name: "Connection", value: "close")
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body {
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let client = base.hasPrefix("https:") ? Self.trustingClient : HTTPClient.shared
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// For the tests' own self-signed certificates.
    static let trustingClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(certificateVerification: .none))

    func get(_ path: String, headers: [(String, String)] = []) async throws -> Answer { try await send(.GET, path, headers: headers) }

    /// The state as the web face reads it.
    func state() async throws -> [String: Any] { try await get("/api/v1/state").object }

    func title() async throws -> String {
        ((try await state())["track"] as? [String: Any])?["title"] as? String ?? ""
    }
}

/// A WebSocket client following `/api/v1/events`, keeping every frame it got.
final class EventsClient: Sendable {
    private let frames = Mutex<[String]>([])
    private let closed = Mutex(false)
    private let failure = Mutex<String?>(nil)
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ rig: WebRig, headers: [(String, String)] = []) {
        let url = rig.base.replacingOccurrences(of: "http://", with: "ws://") + "/api/v1/events"
        var extra = HTTPFields()
        for (name, value) in headers { extra[HTTPField.Name(name)!] = value }
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22, additionalHeaders: extra)
        let t = Task { [self] in
            do {
                _ = try await WebSocketClient.connect(url: url, configuration: configuration, logger: Logger(label: "test.ws")) { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        if case .text(let text) = message { self.frames.withLock { $0.append(text) } }
                    }
                }
            } catch {
                self.failure.withLock { $0 = "\(error)" }
            }
            self.closed.withLock { $0 = true }
        }
        task.withLock { $0 = t }
    }

    var all: [[String: Any]] {
        frames.withLock { $0 }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    var isClosed: Bool { closed.withLock { $0 } }

    /// Waits until a frame satisfies `match`, and returns it.
    func waitFor(_ what: String, timeout: Duration = .seconds(45), _ match: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
        var found: [String: Any]?
        let ok = await eventually(timeout: timeout) {
            found = all.first(where: match)
            return found != nil
        }
        if !ok { Issue.record("no \(what) among \(frames.withLock { $0.suffix(10) }) \(failure.withLock { $0 } ?? "")") }
        return try #require(found)
    }

    func close() { task.withLock { $0?.cancel() } }
}

extension [String: Any] {
    var type: String { self["type"] as? String ?? "" }
    var sequence: Int { self["sequence"] as? Int ?? -1 }
    var state: [String: Any] { self["state"] as? [String: Any] ?? [:] }
    var status: String { state["status"] as? String ?? "" }
}

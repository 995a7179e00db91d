import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// POST {url}/1/submit-listens with `Authorization: Token …`, each answer (or its absence) as the queue's outcome.
struct ListenBrainzClient: Sendable {
    let http: HTTPClient
    let endpoint: String
    let token: String
    let timeout: Double

    init(http: HTTPClient, url: URL, token: String, timeout: Double) {
        self.http = http
        endpoint = url.absoluteString + "/1/submit-listens"
        self.token = token
        self.timeout = timeout
    }

    /// An HTTP client whose connection attempts give up within `timeout` too.
    static func makeHTTPClient(timeout: Double) -> HTTPClient {
        let wait = TimeAmount.milliseconds(Int64(max(0.1, timeout) * 1000))
        var configuration = HTTPClient.Configuration(timeout: .init(connect: wait, read: wait))
        configuration.decompression = .disabled
        // The queue retries on its own terms (backoff, batches); the pool's own retries would hold a refused connection
        // until the request's deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func submit(_ kind: ListenBrainzPayload.Kind, _ listens: [ScrobbleListen]) async -> ScrobbleMachine.Outcome {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Token \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Tonearm")
        request.body = .bytes(ByteBuffer(bytes: ListenBrainzPayload.body(kind, listens)))
        do {
            let response = try await http.execute(request, timeout: .milliseconds(Int64(max(0.1, timeout) * 1000)))
            let body = try await response.body.collect(upTo: 64 * 1024)
            return Self.outcome(status: Int(response.status.code), body: String(buffer: body))
        } catch {
            return Self.outcome(error)
        }
    }

    /// 2xx accepted; 401/403 the token; 400, 413 and 422 refused (what was sent); every other status (5xx, 408, 429, a
    /// 404 from a wrong URL) failed, to be retried: a listen is set aside only when the server says it is wrong.
    static func outcome(status: Int, body: String) -> ScrobbleMachine.Outcome {
        let message = Self.message(body)
        switch status {
        case 200..<300: return .accepted
        case 401, 403: return .unauthorized(status: status)
        case 400, 413, 422: return .refused(status: status, message: message)
        case 404, 405: return .unreachable("HTTP \(status) (is the url right?) \(message)")
        default: return .failed("HTTP \(status) \(message)")
        }
    }

    /// The server's `error` field, else the start of its body.
    static func message(_ body: String) -> String {
        if let data = body.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let error = object["error"] as? String {
            return error
        }
        return String(body.prefix(200)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A request that never reached the server is unreachable (its listens keep their batch); one that may have
    /// (a timeout, a dropped connection) failed.
    static func outcome(_ error: any Error) -> ScrobbleMachine.Outcome {
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout: return .unreachable("no connection in time")
            case .deadlineExceeded, .readTimeout: return .failed("no answer in time")
            case .remoteConnectionClosed: return .failed("the server closed the connection")
            default: return .failed("\(client)")
            }
        }
        if error is NIOConnectionError { return .unreachable("cannot connect (\(error))") }
        if let io = error as? IOError, [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(io.errnoCode) {
            return .unreachable("cannot connect: \(String(cString: strerror(io.errnoCode)))")
        }
        if error is ChannelError, case .connectTimeout = error as! ChannelError { return .unreachable("no connection in time") }
        return .failed("\(error)")
    }
}

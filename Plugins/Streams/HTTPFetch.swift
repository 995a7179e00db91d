import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TonearmCore

/// What a server answered for a stream or playlist URL: the headers, and the body when asked for (bounded).
struct HTTPAnswer: Sendable {
    var url: URL
    var status: Int
    var headers: [String: String]
    /// The first bytes of the body (up to the limit asked for); empty when only the headers were read.
    var body: Data
    /// True when the body was cut at the limit.
    var truncated: Bool

    func header(_ name: String) -> String? { headers[name.lowercased()] }
    var contentType: String? { header("content-type") }
    var contentLength: Int64? { header("content-length").flatMap { Int64($0) } }
    /// The station name of an Icecast/SHOUTcast stream.
    var stationName: String? { header("icy-name").flatMap { $0.isEmpty ? nil : $0 } }
    /// Icecast and SHOUTcast announce live streams with icy-* headers; a file has a length.
    var isLive: Bool {
        headers.keys.contains { $0.hasPrefix("icy-") || $0.hasPrefix("ice-") } || contentLength == nil
    }
}

/// One GET at a time through URLSession (libcurl): reads the headers and, when asked, up to `bodyLimit` bytes, then
/// closes the connection. Never blocks a caller's thread: the answer comes back through `async`.
final class HTTPFetch: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPAnswer, any Error>?
        var response: HTTPURLResponse?
        var body = Data()
        var truncated = false
        /// We closed the connection (headers or enough body read): the error libcurl reports then is ours.
        var closedByUs = false
    }
    private let state = Mutex(State())
    private let bodyLimit: Int
    private let originalURL: URL

    private init(url: URL, bodyLimit: Int) {
        self.bodyLimit = bodyLimit
        self.originalURL = url
    }

    /// GETs `url`; with `bodyLimit` 0 only the headers are read. Throws a `TonearmError` naming what went wrong.
    static func get(_ url: URL, bodyLimit: Int, timeout: Double, userAgent: String) async throws -> HTTPAnswer {
        guard url.scheme?.lowercased() == "http" else {
            return try await tls(url, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent)
        }
        let outcome = try await requests.run {
            try PlainHTTP.get(url, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent)
        }
        switch outcome {
        case .answer(let answer): return answer
        case .redirect(let target): return try await tls(target, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent)
        }
    }

    /// Plain HTTP requests block a thread each (bounded by their time-out): never one of the cooperative pool.
    static let requests = DispatchQueue(label: "tonearm.streams.http", attributes: .concurrent)

    /// https through URLSession (libcurl with TLS).
    private static func tls(_ url: URL, bodyLimit: Int, timeout: Double, userAgent: String) async throws -> HTTPAnswer {
        let fetch = HTTPFetch(url: url, bodyLimit: bodyLimit)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = max(timeout, 1) * 3
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration, delegate: fetch, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue("1", forHTTPHeaderField: "Icy-MetaData")
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                fetch.state.withLock { $0.continuation = continuation }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    private func finish(_ result: Result<HTTPAnswer, any Error>) {
        let continuation = state.withLock { s -> CheckedContinuation<HTTPAnswer, any Error>? in
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(with: result)
    }

    private func answer() -> HTTPAnswer? {
        state.withLock { s in
            guard let response = s.response else { return nil }
            var headers: [String: String] = [:]
            for (key, value) in response.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            return HTTPAnswer(url: response.url ?? originalURL, status: response.statusCode, headers: headers, body: s.body,
                              truncated: s.truncated)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            finish(.failure(TonearmError("UnsupportedType", "\(originalURL.absoluteString): not an HTTP answer")))
            return
        }
        let enough = bodyLimit == 0 || !(200..<300).contains(http.statusCode)
        state.withLock {
            $0.response = http
            $0.closedByUs = enough
        }
        if enough {
            completionHandler(.cancel)
            if let answer = answer() { finish(.success(answer)) }
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let full = state.withLock { s -> Bool in
            let room = bodyLimit - s.body.count
            if data.count > room {
                s.body.append(data.prefix(max(0, room)))
                s.truncated = true
                s.closedByUs = true
                return true
            }
            s.body.append(data)
            return false
        }
        if full {
            dataTask.cancel()
            if let answer = answer() { finish(.success(answer)) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if error != nil, state.withLock({ $0.closedByUs }), let answer = answer() {
            finish(.success(answer))
            return
        }
        if let error {
            finish(.failure(Self.reason(error, url: originalURL)))
            return
        }
        if let answer = answer() { finish(.success(answer)) } else {
            finish(.failure(TonearmError("NetworkError", "\(originalURL.absoluteString): the server closed the connection without an answer")))
        }
    }

    /// A transport error as an error a person can act on.
    static func reason(_ error: any Error, url: URL) -> TonearmError {
        let where_ = url.absoluteString
        guard let urlError = error as? URLError else { return TonearmError("NetworkError", "\(where_): \(error)") }
        switch urlError.code {
        case .cannotFindHost, .dnsLookupFailed:
            return TonearmError("HostNotFound", "\(where_): no such host \(url.host ?? "")")
        case .cannotConnectToHost:
            return TonearmError("ConnectionRefused", "\(where_): the server refused the connection")
        case .timedOut:
            return TonearmError("TimedOut", "\(where_): the server did not answer in time")
        case .httpTooManyRedirects, .redirectToNonExistentLocation:
            return TonearmError("TooManyRedirects", "\(where_): the server redirects in a loop")
        case .networkConnectionLost, .badServerResponse, .zeroByteResource:
            return TonearmError("NetworkError", "\(where_): the server closed the connection")
        case .cancelled:
            return TonearmError("Cancelled", "\(where_): cancelled")
        default:
            return TonearmError("NetworkError", "\(where_): \(urlError.localizedDescription)")
        }
    }

    /// An HTTP error status as a named error.
    static func statusError(_ answer: HTTPAnswer, url: URL) -> TonearmError? {
        guard !(200..<300).contains(answer.status) else { return nil }
        let text = HTTPURLResponse.localizedString(forStatusCode: answer.status)
        let name = answer.status == 404 || answer.status == 410 ? "NotFound" : (answer.status == 401 || answer.status == 403 ? "AccessDenied" : "HTTPError")
        return TonearmError(name, "\(url.absoluteString): the server answered HTTP \(answer.status) \(text)")
    }
}

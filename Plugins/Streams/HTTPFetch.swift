import Foundation
import NIOHTTP1
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

/// One GET: plain `http` through `PlainHTTP` (which takes Icecast's and SHOUTcast's loose answers), `https` through
/// `TLSFetch`. Never blocks a caller's thread: the answer comes back through `async`.
enum HTTPFetch {
    /// GETs `url`; with `bodyLimit` 0 only the headers are read. `trustBundle`: the CAs https trusts (nil: the
    /// system's). Throws a `TonearmError` naming what went wrong.
    static func get(_ url: URL, bodyLimit: Int, timeout: Double, userAgent: String, trustBundle: String? = nil) async throws -> HTTPAnswer {
        guard url.scheme?.lowercased() == "http" else {
            return try await TLSFetch.get(url, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent, trustBundle: trustBundle)
        }
        let outcome = try await requests.run {
            try PlainHTTP.get(url, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent)
        }
        switch outcome {
        case .answer(let answer): return answer
        case .redirect(let target):
            return try await TLSFetch.get(target, bodyLimit: bodyLimit, timeout: timeout, userAgent: userAgent, trustBundle: trustBundle)
        }
    }

    /// Plain HTTP requests block a thread each (bounded by their time-out): never one of the cooperative pool.
    static let requests = DispatchQueue(label: "tonearm.streams.http", attributes: .concurrent)

    /// An HTTP error status as a named error.
    static func statusError(_ answer: HTTPAnswer, url: URL) -> TonearmError? {
        guard !(200..<300).contains(answer.status) else { return nil }
        let text = HTTPResponseStatus(statusCode: answer.status).reasonPhrase
        let reason: TonearmError.Reason = answer.status == 404 || answer.status == 410 ? .notFound
            : (answer.status == 401 || answer.status == 403 ? .accessDenied : .httpError)
        return TonearmError(reason, "\(url.absoluteString): the server answered HTTP \(answer.status) \(text)")
    }
}

import Crypto
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Synchronization
import TonearmCore

/// What a request must pass before any route sees it: a `Host` this server answers to (DNS rebinding), an `Origin`
/// of its own for anything that changes something or opens a WebSocket (CSRF), and the password when one is set.
struct RequestGuard<Context: RequestContext>: RouterMiddleware {
    let access: WebAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let problem = access.check(request.head) { return WebResponses.problem(problem) }
        do {
            switch request.method {
            case .options:
                return Response(status: .noContent, headers: [.allow: "GET, HEAD, POST, PUT, DELETE, OPTIONS"])
            default:
                return try await next(request, context)
            }
        } catch let error as HTTPError where error.status == .notFound {
            // A path no route serves answers like every other error.
            return WebResponses.problem(.notFound("nothing is served at \(request.uri.path)"))
        }
    }
}

/// The rules `RequestGuard` applies, and the page's login sessions.
final class WebAccess: Sendable {
    let settings: WebSettings
    private struct Logins {
        var sessions: Set<String> = []
        var failures = 0
    }
    private let logins = Mutex(Logins())
    static let cookieName = "tonearm_session"

    init(settings: WebSettings) { self.settings = settings }

    /// Why the request with this head is refused, or nil.
    func check(_ request: HTTPRequest) -> WebProblem? {
        let host = request.authority ?? ""
        guard isAllowed(host: host) else {
            return .forbidden("this server does not answer to the host '\(host)' (add it to [web] allowed-hosts)")
        }
        let changes = request.method != .get && request.method != .head && request.method != .options
        let upgrades = request.headerFields[.upgrade]?.lowercased() == "websocket"
        if changes || upgrades, let origin = request.headerFields[.origin], !isOwn(origin: origin, host: host) {
            return .forbidden("requests from the page at \(origin) are refused")
        }
        if settings.password != nil, !Self.isOpen(Self.path(request)), !isAuthorized(request) {
            return .unauthorized("log in first (POST /api/v1/login) or send Authorization: Bearer PASSWORD")
        }
        return nil
    }

    /// The request's path without its query.
    static func path(_ request: HTTPRequest) -> String {
        String((request.path ?? "").prefix { $0 != "?" && $0 != "#" })
    }

    /// The page and the login are reachable without the password; everything else needs it.
    static func isOpen(_ path: String) -> Bool {
        PageFiles.names.contains(path) || path == "/api/v1/login" || path == "/api/v1/openapi.json"
    }

    /// The name in a `Host` header, without the port or an IPv6 address's brackets.
    static func hostName(_ header: String) -> String {
        var host = header.lowercased()
        if host.hasPrefix("[") {
            host = String(host.dropFirst().prefix { $0 != "]" })
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            host = String(host[..<colon])
        }
        return host
    }

    func isAllowed(host header: String) -> Bool {
        let host = Self.hostName(header)
        if host.isEmpty { return false }
        // An address typed as digits was not looked up: no rebinding can hide behind it.
        if WebSettings.isIPAddress(host) { return true }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        return settings.allowedHosts.contains(host) || settings.allowedHosts.contains("*")
    }

    func isOwn(origin: String, host: String) -> Bool {
        guard let url = URL(string: origin), let scheme = url.scheme, let originHost = url.host else { return false }
        // Browsers send the page's http(s) origin; a ws:// one comes only from WebSocket libraries outside a browser,
        // some of which leave the port out, so for those the host name alone must match.
        if scheme == "ws" || scheme == "wss" {
            return originHost.lowercased() == Self.hostName(host)
        }
        guard scheme == "http" || scheme == "https" else { return false }
        let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
        let bare = host.lowercased()
        return originAuthority.lowercased() == bare || "[\(originHost)]:\(url.port ?? 0)".lowercased() == bare
            || (url.port == nil && originHost.lowercased() == bare)
    }

    func isAuthorized(_ request: HTTPRequest) -> Bool {
        guard let password = settings.password else { return true }
        if let authorization = request.headerFields[.authorization], authorization.hasPrefix("Bearer ") {
            return Self.same(String(authorization.dropFirst(7)), password)
        }
        for cookie in (request.headerFields[.cookie] ?? "").split(separator: ";") {
            let pair = cookie.trimmingCharacters(in: .whitespaces)
            guard pair.hasPrefix(Self.cookieName + "=") else { continue }
            let token = String(pair.dropFirst(Self.cookieName.count + 1))
            if logins.withLock({ $0.sessions.contains(token) }) { return true }
        }
        return false
    }

    /// Checks a login's password: a new session token, or nil after a delay that grows with each failure in a row.
    func login(_ given: String) async -> String? {
        guard let password = settings.password else { return "" }
        if Self.same(given, password) {
            var bytes = [UInt8](repeating: 0, count: 32)
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
            let token = bytes.map { String(format: "%02x", $0) }.joined()
            logins.withLock {
                $0.failures = 0
                $0.sessions.insert(token)
            }
            return token
        }
        let failures = logins.withLock { $0.failures += 1; return $0.failures }
        try? await Task.sleep(for: .milliseconds(min(5_000, 250 * (1 << min(failures, 5)))))
        return nil
    }

    /// Compares without an early exit, so the time taken tells nothing about the password.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(SHA256.hash(data: Array(a.utf8))), y = Array(SHA256.hash(data: Array(b.utf8)))
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}

/// Answers HEAD as GET without the body (curl -I, link checkers), before the router picks a route by method.
struct HeadAsGet<Base: HTTPResponder>: HTTPResponder {
    let base: Base

    func respond(to request: Request, context: Base.Context) async throws -> Response {
        guard request.method == .head else { return try await base.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        let response = try await base.respond(to: Request(head: head, body: request.body), context: context)
        return Response(status: response.status, headers: response.headers)
    }
}

import Foundation

/// Why a SUBSCRIBE or UNSUBSCRIBE was refused: the HTTP status GENA names for it, and the reason.
public struct GENAError: Error, Sendable, Equatable {
    public var status: Int
    public var reason: String
    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// GENA event subscriptions as a plain value: subscribe, renew, unsubscribe and expiry decided here with no I/O,
/// each with the checks that keep a controller from using the renderer against a third machine.
public struct Subscriptions: Sendable {
    public struct Subscription: Sendable, Equatable {
        public var sid: String
        /// The service name ("AVTransport").
        public var service: String
        /// The callback URLs, each on the subscriber's own address.
        public var callbacks: [URL]
        public var expires: ContinuousClock.Instant
        /// The next event's key (0: the initial event).
        public var sequence: UInt32 = 0
    }

    /// The most held at once.
    public let maximum: Int
    /// The longest a subscription is granted (also for "infinite"), in seconds.
    public static let longest = 1800
    public internal(set) var all: [String: Subscription] = [:]

    public init(maximum: Int) { self.maximum = maximum }

    /// A new subscription from `remote` (an IP address): its SID and the seconds granted.
    public mutating func subscribe(service: String, callback: String?, nt: String?, timeout: String?, remote: String,
                                   now: ContinuousClock.Instant, makeID: () -> String = { "uuid:" + UUID().uuidString.lowercased() })
        throws(GENAError) -> (sid: String, seconds: Int) {
        guard nt == "upnp:event" else { throw GENAError(412, "NT must be upnp:event") }
        let callbacks = try Self.callbacks(callback, remote: remote)
        expire(now: now)
        guard all.count < maximum else { throw GENAError(503, "too many subscriptions (\(maximum))") }
        let seconds = Self.seconds(timeout)
        let sid = makeID()
        all[sid] = Subscription(sid: sid, service: service, callbacks: callbacks, expires: now + .seconds(seconds))
        return (sid, seconds)
    }

    /// Renews a subscription of `service`; the seconds granted.
    public mutating func renew(sid: String, service: String, timeout: String?, now: ContinuousClock.Instant) throws(GENAError) -> Int {
        expire(now: now)
        guard var s = all[sid], s.service == service else { throw GENAError(412, "no subscription \(sid)") }
        let seconds = Self.seconds(timeout)
        s.expires = now + .seconds(seconds)
        all[sid] = s
        return seconds
    }

    public mutating func unsubscribe(sid: String, service: String) throws(GENAError) {
        guard all[sid]?.service == service else { throw GENAError(412, "no subscription \(sid)") }
        all[sid] = nil
    }

    /// Drops the subscriptions whose time is up; their SIDs.
    @discardableResult
    public mutating func expire(now: ContinuousClock.Instant) -> [String] {
        let gone = all.values.filter { $0.expires <= now }.map(\.sid)
        for sid in gone { all[sid] = nil }
        return gone
    }

    /// The subscriptions of a service.
    public func of(_ service: String) -> [Subscription] { all.values.filter { $0.service == service } }

    /// Takes the key of the next event to `sid` (after 2^32-1 it wraps to 1, as GENA says), nil when it is gone.
    public mutating func takeSequence(_ sid: String) -> UInt32? {
        guard var s = all[sid] else { return nil }
        let key = s.sequence
        s.sequence = key == UInt32.max ? 1 : key + 1
        all[sid] = s
        return key
    }

    /// `Second-N` (or `Second-infinite`, or nothing) as the seconds granted: 1 to `longest`.
    static func seconds(_ header: String?) -> Int {
        guard let header, header.lowercased().hasPrefix("second-"), let n = Int(header.dropFirst(7)) else { return longest }
        return min(max(n, 1), longest)
    }

    /// The CALLBACK header's URLs: `<http://…>` one or more, plain http, on the subscriber's own address. Another
    /// address would let anyone make this renderer send requests to a third machine.
    static func callbacks(_ header: String?, remote: String) throws(GENAError) -> [URL] {
        guard let header, !header.isEmpty, header.utf8.count <= 2048 else { throw GENAError(412, "CALLBACK is missing") }
        var urls: [URL] = []
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { throw GENAError(412, "CALLBACK is malformed") }
            let text = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
            guard let url = URL(string: text), url.scheme?.lowercased() == "http", let host = url.host else {
                throw GENAError(412, "CALLBACK \(text) is not an http URL")
            }
            guard host == remote || (Self.isLoopback(host) && Self.isLoopback(remote)) else {
                throw GENAError(412, "CALLBACK \(text) is not on the subscriber's own address \(remote)")
            }
            urls.append(url)
        }
        guard !urls.isEmpty, urls.count <= 4 else { throw GENAError(412, "CALLBACK must hold 1 to 4 URLs in <>") }
        return urls
    }

    static func isLoopback(_ host: String) -> Bool { host.hasPrefix("127.") || host == "::1" || host == "localhost" }
}

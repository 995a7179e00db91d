import Foundation

/// `[web]`: the HTTP and WebSocket face and the page it serves. On by default, on loopback only (as Mopidy's HTTP
/// frontend): a page elsewhere on the network must first be allowed, with a password.
public struct WebSettings: Sendable, Equatable {
    public var enabled = true
    /// The IP address to listen on; loopback by default, "0.0.0.0" or "::" for the whole network.
    public var address = "127.0.0.1"
    /// The TCP port; 0 picks a free one (the log names it).
    public var port = 6680
    /// Needed beyond loopback: the page's login and scripts' bearer token.
    public var password: String?
    /// Host names (beside loopback names and IP addresses) that requests may name in `Host`.
    public var allowedHosts: [String] = []
    /// PEM files for HTTPS; both or neither.
    public var certificate: String?
    public var key: String?

    public init() {}

    static let keys = ["enabled", "address", "port", "password", "allowed-hosts", "certificate", "key"]

    /// Whether `address` is only reachable from this machine.
    public var isLoopback: Bool { Self.isLoopback(address) }

    /// Whether `text` is an IPv4 or IPv6 address written out (not a name to look up).
    public static func isIPAddress(_ text: String) -> Bool { MPDProtocolSettings.isIPAddress(text) }

    public static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.")
    }

    /// The address to open in a browser (the listening port when it was picked: `port`). Listening on every
    /// interface, it names this machine's first network address, the one a phone on the same network reaches.
    public func url(port bound: Int? = nil) -> String {
        let scheme = certificate == nil ? "http" : "https"
        var host = address
        if host == "0.0.0.0" || host == "::" { host = Self.networkAddress() ?? (host == "::" ? "::1" : "127.0.0.1") }
        if host.contains(":") { host = "[\(host)]" }
        return "\(scheme)://\(host):\(bound ?? port)/"
    }

    /// The first IPv4 address of an interface that is up and not loopback.
    static func networkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let found = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 -> Bool in
                var a = v4.pointee.sin_addr
                return inet_ntop(AF_INET, &a, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            if found { return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return nil
    }

    /// Reads the section; errors name the key and what it takes.
    public static func parse(_ table: [String: ConfigValue], origin: String) throws -> WebSettings {
        var s = WebSettings()
        func invalid(_ message: String) -> TonearmError { TonearmError(.invalidConfig, "\(origin): [web] \(message)") }
        for (key, value) in table {
            switch (key, value) {
            case ("enabled", .bool(let b)): s.enabled = b
            case ("enabled", _): throw invalid("enabled must be true or false")
            case ("address", .string(let a)) where MPDProtocolSettings.isIPAddress(a): s.address = a
            case ("address", _): throw invalid("address must be an IP address such as \"127.0.0.1\", \"0.0.0.0\" or \"::1\"")
            case ("port", .int(let p)) where (0...65535).contains(p): s.port = p
            case ("port", _): throw invalid("port must be a number from 0 to 65535 (6680 is the default, as Mopidy's)")
            case ("password", .string(let p)) where !p.isEmpty && !p.contains("\n"): s.password = p
            case ("password", _): throw invalid("password must be a non-empty line of text")
            case ("allowed-hosts", .array(let hosts)):
                s.allowedHosts = try hosts.map {
                    guard case .string(let h) = $0, !h.isEmpty, !h.contains("/") else {
                        throw invalid("allowed-hosts must be a list of host names such as [\"music.home.arpa\"]")
                    }
                    return h.lowercased()
                }
            case ("allowed-hosts", _): throw invalid("allowed-hosts must be a list of host names such as [\"music.home.arpa\"]")
            case ("certificate", .string(let p)) where p.hasPrefix("/"): s.certificate = p
            case ("certificate", _): throw invalid("certificate must be the absolute path of a PEM file")
            case ("key", .string(let p)) where p.hasPrefix("/"): s.key = p
            case ("key", _): throw invalid("key must be the absolute path of a PEM file")
            default:
                throw invalid("has no setting '\(key)' (known: \(keys.joined(separator: ", ")))")
            }
        }
        if (s.certificate == nil) != (s.key == nil) { throw invalid("certificate and key go together: set both or neither") }
        if s.enabled, !s.isLoopback, s.password == nil {
            throw invalid("listening on \(s.address) reaches beyond this machine: set a password (or listen on 127.0.0.1)")
        }
        return s
    }

    /// The section as TOML lines (the password hidden).
    public func describe(source: String) -> [String] {
        var lines = ["\n[web]  # \(source)", "enabled = \(enabled)", "address = \(ConfigValue.string(address))", "port = \(port)"]
        if password != nil { lines.append("password = \"…\"  # set") }
        if !allowedHosts.isEmpty { lines.append("allowed-hosts = \(ConfigValue.array(allowedHosts.map(ConfigValue.string)))") }
        if let certificate { lines.append("certificate = \(ConfigValue.string(certificate))") }
        if let key { lines.append("key = \(ConfigValue.string(key))") }
        return lines
    }
}

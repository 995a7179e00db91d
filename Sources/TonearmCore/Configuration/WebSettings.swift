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
        let section = try ConfigSection("\(origin): [web]", table, known: keys)
        var s = WebSettings()
        s.enabled = try section.bool("enabled", true)
        s.address = try section.ipAddress("address", s.address, example: "\"127.0.0.1\", \"0.0.0.0\" or \"::1\"")
        s.port = try section.integer("port", s.port, 0...65535)
        s.password = try section.line("password")
        s.allowedHosts = try section.strings("allowed-hosts")?.map { $0.lowercased() } ?? []
        if s.allowedHosts.contains(where: { $0.contains("/") }) { throw section.fail("allowed-hosts", "a list of host names such as [\"music.home.arpa\"]") }
        s.certificate = try section.path("certificate")?.path
        s.key = try section.path("key")?.path
        if (s.certificate == nil) != (s.key == nil) {
            throw TonearmError(.invalidConfig, "\(section.name) certificate and key go together: set both or neither")
        }
        if s.enabled, !s.isLoopback, s.password == nil {
            throw TonearmError(.invalidConfig, "\(section.name) listening on \(s.address) reaches beyond this machine: set a password (or listen on 127.0.0.1)")
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

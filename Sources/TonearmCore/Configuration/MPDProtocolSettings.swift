import Foundation

/// `[mpd-protocol]`: the MPD protocol server for mpc, ncmpcpp and phone apps. Off unless enabled: any local user
/// (not only the session's owner, as on the session bus) could otherwise control the player through a TCP port.
public struct MPDProtocolSettings: Sendable, Equatable {
    public var enabled = false
    /// The IP address to listen on; loopback by default, "0.0.0.0" or "::" for the whole network.
    public var address = "127.0.0.1"
    /// The TCP port; 0 picks a free one (the log names it).
    public var port = 6600
    /// When set, every command but password, ping and close needs it first.
    public var password: String?
    /// A Unix socket path to listen on as well.
    public var unixSocket: String?
    /// Seconds a client may stay silent (outside `idle`) before it is dropped; mpd's `connection_timeout` default.
    public var connectionTimeout = 60

    /// The timeout as a duration.
    public var connectionTimeoutDuration: Duration { .seconds(connectionTimeout) }

    public init() {}

    static let keys = ["enabled", "address", "port", "password", "unix-socket", "connection-timeout"]

    /// Reads the section; errors name the key and what it takes.
    public static func parse(_ table: [String: ConfigValue], origin: String) throws -> MPDProtocolSettings {
        let section = try ConfigSection("\(origin): [mpd-protocol]", table, known: keys)
        var s = MPDProtocolSettings()
        s.enabled = try section.bool("enabled", false)
        s.address = try section.ipAddress("address", s.address, example: "\"127.0.0.1\" or \"::1\"")
        s.port = try section.integer("port", s.port, 0...65535)
        s.password = try section.line("password")
        s.unixSocket = try section.path("unix-socket")?.path
        s.connectionTimeout = try section.integer("connection-timeout", s.connectionTimeout, 1...86_400)
        return s
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// The section as TOML lines (the password hidden).
    public func describe(source: String) -> [String] {
        var lines = ["\n[mpd-protocol]  # \(source)", "enabled = \(enabled)", "address = \(ConfigValue.string(address))", "port = \(port)"]
        if password != nil { lines.append("password = \"…\"  # set") }
        if let unixSocket { lines.append("unix-socket = \(ConfigValue.string(unixSocket))") }
        lines.append("connection-timeout = \(connectionTimeout)")
        return lines
    }
}

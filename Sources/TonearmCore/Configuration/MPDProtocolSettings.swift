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
        var s = MPDProtocolSettings()
        for (key, value) in table {
            switch (key, value) {
            case ("enabled", .bool(let b)): s.enabled = b
            case ("enabled", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] enabled must be true or false")
            case ("address", .string(let a)):
                guard isIPAddress(a) else {
                    throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] address must be an IP address such as \"127.0.0.1\" or \"::1\", not \"\(a)\"")
                }
                s.address = a
            case ("address", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] address must be a string such as \"127.0.0.1\"")
            case ("port", .int(let p)) where (0...65535).contains(p): s.port = p
            case ("port", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] port must be a number from 0 to 65535 (6600 is mpd's)")
            case ("password", .string(let p)):
                guard !p.isEmpty, !p.contains("\n") else {
                    throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] password must be a non-empty line of text")
                }
                s.password = p
            case ("password", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] password must be a string")
            case ("unix-socket", .string(let path)):
                guard path.hasPrefix("/") else {
                    throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] unix-socket must be an absolute path, not \"\(path)\"")
                }
                s.unixSocket = path
            case ("unix-socket", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] unix-socket must be a path")
            case ("connection-timeout", .int(let t)) where (1...86_400).contains(t): s.connectionTimeout = t
            case ("connection-timeout", _):
                throw TonearmError(.invalidConfig, "\(origin): [mpd-protocol] connection-timeout must be a number of seconds from 1 to 86400 (mpd's default is 60)")
            default:
                throw TonearmError(.invalidConfig, "\(origin): unknown setting '\(key)' in [mpd-protocol] (known: \(keys.joined(separator: ", ")))")
            }
        }
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

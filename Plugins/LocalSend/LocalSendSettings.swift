import Foundation
import TonearmCore

/// `[plugins.localsend]`: whether Tonearm is a LocalSend device, how it is seen, and whom it lets send.
public struct LocalSendSettings: Sendable, Equatable {
    /// Off unless asked for: it opens a port to the network.
    public var enabled: Bool
    /// The name phones show.
    public var alias: String
    public var port: Int
    /// The address the server listens on ("0.0.0.0": every interface).
    public var address: String
    /// HTTPS (as the app) unless `http` is configured.
    public var https: Bool
    /// Multicast announcements and answers on 224.0.0.167.
    public var discovery: Bool
    public var multicastGroup: String
    public var policy: LocalSendMachine.Policy

    public static let keys: [String] = [
        "enabled", "alias", "port", "address", "protocol", "discovery", "multicast-group", "accept", "pin",
        "max-file-mb", "max-session-mb", "max-files", "stall-seconds", "ask-seconds",
    ]

    /// Reads the section; every key has a default (`accept = "ask"`, port 53317, HTTPS, discovery on).
    public init(section: [String: ConfigValue], hostName: String = ProcessInfo.processInfo.hostName) throws(TonearmError) {
        let s = try ConfigSection("[plugins.localsend]", section, known: Self.keys)
        enabled = try s.bool("enabled", false)
        let shortHost = hostName.split(separator: ".").first.map(String.init) ?? hostName
        alias = try s.string("alias", shortHost.isEmpty ? "Tonearm" : "Tonearm on \(shortHost)")
        port = Int(try s.number("port", 53317, 0...65535))
        address = try s.string("address", "0.0.0.0")
        switch try s.string("protocol", "https") {
        case "https": https = true
        case "http": https = false
        default: throw s.fail("protocol", "\"https\" or \"http\"")
        }
        discovery = try s.bool("discovery", true)
        multicastGroup = try s.string("multicast-group", "224.0.0.167")
        let modeName = try s.string("accept", "ask")
        guard let mode = LocalSendMachine.AcceptMode(rawValue: modeName) else {
            throw s.fail("accept", "one of " + LocalSendMachine.AcceptMode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
        }
        var pin: String?
        switch s.table["pin"] {
        case nil: pin = nil
        case .string(let text) where !text.isEmpty && text.count <= 64: pin = text
        case .int(let i) where i >= 0: pin = String(i)
        case .some: throw s.fail("pin", "a string of 1 to 64 characters")
        }
        if mode == .pin, pin == nil {
            throw TonearmError(.invalidConfig, "[plugins.localsend] accept = \"pin\" needs a pin = \"…\"")
        }
        let mb = Double(1 << 20)
        policy = LocalSendMachine.Policy(
            mode: mode, pin: pin,
            maxFileBytes: Int64(try s.number("max-file-mb", 2048, 0.001...1_048_576) * mb),
            maxSessionBytes: Int64(try s.number("max-session-mb", 8192, 0.001...1_048_576) * mb),
            maxFiles: Int(try s.number("max-files", 500, 1...100_000)),
            stallSeconds: try s.number("stall-seconds", 30, 0.1...3600),
            askSeconds: try s.number("ask-seconds", 120, 1...86_400))
    }

    /// The effective values, for `tonearm config`.
    public var values: [(String, ConfigValue)] {
        [("enabled", .bool(enabled)), ("alias", .string(alias)), ("port", .int(port)), ("address", .string(address)),
         ("protocol", .string(https ? "https" : "http")), ("discovery", .bool(discovery)), ("multicast-group", .string(multicastGroup)),
         ("accept", .string(policy.mode.rawValue)), ("pin", .string(policy.pin == nil ? "" : "(set)")),
         ("max-file-mb", .double(Double(policy.maxFileBytes) / Double(1 << 20))),
         ("max-session-mb", .double(Double(policy.maxSessionBytes) / Double(1 << 20))), ("max-files", .int(policy.maxFiles)),
         ("stall-seconds", .double(policy.stallSeconds)), ("ask-seconds", .double(policy.askSeconds))]
    }
}

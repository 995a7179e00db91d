import Foundation
import TonearmCore

/// `[plugins.upnp]`: whether Tonearm is a UPnP media renderer others can cast to, how it is named and reached, and
/// what a cast does to the queue.
public struct UPnPSettings: Sendable, Equatable {
    /// What SetAVTransportURI does to Tonearm's queue.
    public enum QueueMode: String, Sendable, CaseIterable {
        /// The cast replaces the queue (as a standalone renderer would).
        case replace
        /// The cast goes right after the current track and plays from there; the rest of the queue stays.
        case next
    }

    /// Off unless asked for: it announces this computer on the network.
    public var enabled: Bool
    /// The name controllers list.
    public var name: String
    /// The IPv4 address served on and announced ("0.0.0.0": every interface, announcing the one a request came in on).
    public var address: String
    /// A network interface ("eth0") whose IPv4 address is served on and announced, in place of `address`.
    public var interface: String?
    /// The HTTP port of the description, control and event URLs (0: any free one).
    public var port: Int
    /// The device's UUID; nil: one made at the first start and kept in the plugin's folder.
    public var uuid: String?
    public var queue: QueueMode
    /// The most event subscriptions held at once, over all services.
    public var maximumSubscriptions: Int

    public static let keys = ["enabled", "name", "address", "interface", "port", "uuid", "queue", "max-subscriptions"]

    /// Reads the section; every key has a default (off, "Tonearm on HOST", every interface, port 49494, replace).
    public init(section: [String: ConfigValue], hostName: String = ProcessInfo.processInfo.hostName) throws(TonearmError) {
        let s = try ConfigSection("[plugins.upnp]", section, known: Self.keys)
        enabled = try s.bool("enabled", false)
        let shortHost = hostName.split(separator: ".").first.map(String.init) ?? hostName
        name = try s.line("name") ?? (shortHost.isEmpty ? "Tonearm" : "Tonearm on \(shortHost)")
        guard name.utf8.count <= 64 else { throw s.fail("name", "at most 64 bytes long") }
        address = try s.ipAddress("address", "0.0.0.0", example: "192.168.1.20")
        guard !address.contains(":") else { throw s.fail("address", "an IPv4 address such as 192.168.1.20") }
        interface = try s.line("interface")
        if interface != nil, s.table["address"] != nil { throw s.fail("interface", "left out when address is set (one or the other)") }
        port = try s.integer("port", 49494, 0...65535)
        if let text = try s.string("uuid") {
            guard UUID(uuidString: text) != nil else { throw s.fail("uuid", "a UUID such as 5f2b0c1e-3a4d-4e8f-9a6b-1c2d3e4f5a6b") }
            uuid = text.lowercased()
        } else {
            uuid = nil
        }
        queue = try s.choice("queue", QueueMode.replace)
        maximumSubscriptions = try s.integer("max-subscriptions", 32, 1...1000)
    }

    /// The effective values, for `tonearm config`.
    public var values: [(String, ConfigValue)] {
        [("enabled", .bool(enabled)), ("name", .string(name)), ("address", .string(address)),
         ("interface", .string(interface ?? "")), ("port", .int(port)),
         ("uuid", .string(uuid ?? "(made at the first start)")), ("queue", .string(queue.rawValue)),
         ("max-subscriptions", .int(maximumSubscriptions))]
    }
}

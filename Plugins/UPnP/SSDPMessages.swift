import Foundation

/// SSDP's messages for one root device, made and read with no I/O: the NOTIFY alive and byebye announcements, the
/// answers to M-SEARCH, and which of the device's targets a search asks for.
public struct SSDPMessages: Sendable {
    public static let group = "239.255.255.250"
    public static let port = 1900
    /// How long controllers may keep an announcement, in seconds; it is made again at half that.
    public static let maximumAge = 1800

    /// "uuid:…"
    public let udn: String
    public let deviceType: String
    public let serviceTypes: [String]
    public let server: String

    public init(udn: String, deviceType: String, serviceTypes: [String], server: String) {
        self.udn = udn
        self.deviceType = deviceType
        self.serviceTypes = serviceTypes
        self.server = server
    }

    /// Every (NT, USN) the device announces: the root device, itself, its type and each service type.
    public var targets: [(nt: String, usn: String)] {
        [("upnp:rootdevice", "\(udn)::upnp:rootdevice"), (udn, udn), (deviceType, "\(udn)::\(deviceType)")]
            + serviceTypes.map { ($0, "\(udn)::\($0)") }
    }

    /// The targets a search target matches (none for a search meant for other devices).
    public func matching(_ st: String) -> [(nt: String, usn: String)] {
        if st == "ssdp:all" { return targets }
        // A search for an older version of a type this device has is answered with that version (UDA 1.1).
        return targets.compactMap { t in
            if t.nt == st { return t }
            guard let (base, version) = Self.versioned(t.nt), let (askedBase, asked) = Self.versioned(st), askedBase == base,
                  asked <= version else { return nil }
            return (st, "\(udn)::\(st)")
        }
    }

    static func versioned(_ type: String) -> (String, Int)? {
        guard type.hasPrefix("urn:"), let colon = type.lastIndex(of: ":"), let v = Int(type[type.index(after: colon)...]) else { return nil }
        return (String(type[..<colon]), v)
    }

    public func notify(_ target: (nt: String, usn: String), location: String, alive: Bool) -> String {
        var lines = ["NOTIFY * HTTP/1.1", "HOST: \(Self.group):\(Self.port)", "NT: \(target.nt)",
                     "NTS: \(alive ? "ssdp:alive" : "ssdp:byebye")", "USN: \(target.usn)"]
        if alive {
            lines += ["CACHE-CONTROL: max-age=\(Self.maximumAge)", "LOCATION: \(location)", "SERVER: \(server)"]
        }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    public func searchAnswer(_ target: (nt: String, usn: String), location: String, date: Date = Date()) -> String {
        ["HTTP/1.1 200 OK", "CACHE-CONTROL: max-age=\(Self.maximumAge)", "DATE: \(Self.httpDate(date))", "EXT:",
         "LOCATION: \(location)", "SERVER: \(server)", "ST: \(target.nt)", "USN: \(target.usn)"]
            .joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// An M-SEARCH's search target and MX, or nil when the datagram is something else (a NOTIFY, an answer, junk).
    public static func search(_ datagram: String) -> (st: String, mx: Int)? {
        let lines = datagram.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let first = lines.first, first.uppercased().hasPrefix("M-SEARCH * HTTP/1.") else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].trimmingCharacters(in: .whitespaces).uppercased()] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard headers["MAN"]?.trimmingCharacters(in: ["\""]) == "ssdp:discover", let st = headers["ST"], !st.isEmpty else { return nil }
        return (st, Int(headers["MX"] ?? "") ?? 1)
    }

    static func httpDate(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return f.string(from: date)
    }
}

import Foundation

/// Which signals a subscription wants. `nil` fields match anything.
public struct DBusMatchRule: Sendable, Equatable {
    /// A unique (`:1.42`) or well-known (`org.mpris.MediaPlayer2.tonearm`) bus name.
    public var sender: String?
    public var path: String?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string (PropertiesChanged's interface name, say).
    public var arg0: String?

    public init(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as given to the bus's `AddMatch`, e.g. `type='signal',sender='…',member='…'`.
    public var ruleString: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender=" + Self.quote(sender)) }
        if let path { parts.append("path=" + Self.quote(path)) }
        if let interface { parts.append("interface=" + Self.quote(interface)) }
        if let member { parts.append("member=" + Self.quote(member)) }
        if let arg0 { parts.append("arg0=" + Self.quote(arg0)) }
        return parts.joined(separator: ",")
    }

    /// Quotes a match-rule value; an apostrophe is written as `'\''`.
    static func quote(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Whether `signal` matches; `owner` is the unique name currently owning a well-known `sender`.
    func matches(_ signal: DBusSignal, owner: String?) -> Bool {
        if let sender, signal.sender != sender, signal.sender != owner { return false }
        if let path, signal.path != path { return false }
        if let interface, signal.interface != interface { return false }
        if let member, signal.member != member { return false }
        if let arg0, signal.arguments.first?.stringValue != arg0 { return false }
        return true
    }
}


/// A signal received from the bus.
public struct DBusSignal: Sendable, Equatable {
    /// The sender's unique name (`:1.42`), or `org.freedesktop.DBus` for the bus itself.
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// A named D-Bus error.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error name, e.g. `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: String
    /// A message a person can act on.
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    static let prefix = "org.freedesktop.DBus.Error."

    public static func invalidArgs(_ m: String) -> DBusError { .init(name: prefix + "InvalidArgs", message: m) }
    public static func unknownMethod(_ m: String) -> DBusError { .init(name: prefix + "UnknownMethod", message: m) }
    public static func unknownInterface(_ m: String) -> DBusError { .init(name: prefix + "UnknownInterface", message: m) }
    public static func unknownProperty(_ m: String) -> DBusError { .init(name: prefix + "UnknownProperty", message: m) }
    public static func unknownObject(_ m: String) -> DBusError { .init(name: prefix + "UnknownObject", message: m) }
    public static func propertyReadOnly(_ m: String) -> DBusError { .init(name: prefix + "PropertyReadOnly", message: m) }
    public static func failed(_ m: String) -> DBusError { .init(name: prefix + "Failed", message: m) }
    public static func serviceUnknown(_ m: String) -> DBusError { .init(name: prefix + "ServiceUnknown", message: m) }
    /// A call that got no reply in time (libdbus's name for a timeout).
    public static func noReply(_ m: String) -> DBusError { .init(name: prefix + "NoReply", message: m) }
    /// The connection is closed or was lost.
    public static func disconnected(_ m: String) -> DBusError { .init(name: prefix + "Disconnected", message: m) }
    /// No bus could be found or reached.
    public static func noServer(_ m: String) -> DBusError { .init(name: prefix + "NoServer", message: m) }
    public static func accessDenied(_ m: String) -> DBusError { .init(name: prefix + "AccessDenied", message: m) }
    public static func nameHasNoOwner(_ m: String) -> DBusError { .init(name: prefix + "NameHasNoOwner", message: m) }
    public static func noMemory(_ m: String) -> DBusError { .init(name: prefix + "NoMemory", message: m) }
}

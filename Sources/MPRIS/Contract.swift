import DBus
import Synchronization

/// A declared interface, read from the embedded contract XML the first time it is needed: a start answers its first
/// calls before the interfaces they do not touch are parsed (all nine took about half a millisecond before the first
/// answer).
final class Contract: Sendable {
    private let name: String
    private let parsed = Mutex<DBusInterfaceDescription?>(nil)

    init(_ name: String) { self.name = name }

    var description: DBusInterfaceDescription {
        parsed.withLock { parsed in
            if let parsed { return parsed }
            let description = Self.parse(name)
            parsed = description
            return description
        }
    }

    private static func parse(_ name: String) -> DBusInterfaceDescription {
        guard let xml = InterfaceXML.all[name],
              let interface = try? DBusInterfaceDescription.parse(xml: xml).first(where: { $0.name == name }) else {
            preconditionFailure("dbus/\(name).xml is missing or invalid; run scripts/gen-interfaces")
        }
        return interface
    }
}

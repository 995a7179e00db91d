import DBus
import Logging

/// Logs every call, property read and write on an interface at debug level (`tonearmd --verbose`), with the
/// sender and how it ended, so a client's conversation with the daemon can be followed.
struct LoggedInterface: DBusInterfaceHandler {
    let inner: any DBusInterfaceHandler
    let logger: Logger
    var interface: DBusInterfaceDescription { inner.interface }
    func answersOutOfOrder(_ method: String) -> Bool { inner.answersOutOfOrder(method) }
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool { inner.answersOutOfOrder(method, arguments) }

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        logger.debug("\(sender) → \(interface.name).\(method)(\(Self.brief(arguments)))")
        do {
            let reply = try await inner.call(method, arguments, from: sender)
            logger.debug("\(sender) ← \(interface.name).\(method): \(Self.brief(reply))")
            return reply
        } catch {
            logger.debug("\(sender) ← \(interface.name).\(method) failed: \(error)")
            throw error
        }
    }

    /// Reads answered at once stay answered at once with logging on (they are not logged: progress bars poll).
    func currentValue(_ property: String) -> DBusValue? { inner.currentValue(property) }

    func get(_ property: String) async throws -> DBusValue {
        let value = try await inner.get(property)
        logger.trace("Get \(interface.name).\(property) = \(value)")
        return value
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        logger.debug("Set \(interface.name).\(property) = \(value)")
        try await inner.set(property, value)
    }

    /// Values as text, each cut at 300 characters: a Waveform reply or a long queue would fill a log line with
    /// tens of thousands of numbers.
    static func brief(_ values: [DBusValue]) -> String {
        values.map { value in
            let text = value.description
            return text.count <= 300 ? text : text.prefix(300) + "… (\(text.count) characters)"
        }.joined(separator: ", ")
    }
}

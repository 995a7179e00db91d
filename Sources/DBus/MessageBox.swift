internal import CDBus

/// Owns one reference to a libdbus message so it can be handed to the connection's loop thread.
/// A message that is being built belongs to one thread; once queued it is only read by libdbus.
final class MessageBox: @unchecked Sendable {
    let message: OpaquePointer

    /// Takes over a reference the caller owns.
    init(owning message: OpaquePointer) { self.message = message }

    deinit { dbus_message_unref(message) }

    static func methodCall(destination: String?, path: String, interface: String?, member: String,
                           arguments: [DBusValue]) throws -> MessageBox {
        if let destination { try Marshal.checkBusName(destination) }
        try Marshal.checkPath(path)
        if let interface { try Marshal.checkInterface(interface) }
        try Marshal.checkMember(member)
        try Marshal.check(arguments)
        guard let m = dbus_message_new_method_call(destination, path, interface, member) else {
            throw DBusError.noMemory("out of memory")
        }
        Marshal.append(arguments, to: m)
        return MessageBox(owning: m)
    }

    static func signal(path: String, interface: String, member: String, arguments: [DBusValue]) throws -> MessageBox {
        try Marshal.checkPath(path)
        try Marshal.checkInterface(interface)
        try Marshal.checkMember(member)
        try Marshal.check(arguments)
        guard let m = dbus_message_new_signal(path, interface, member) else { throw DBusError.noMemory("out of memory") }
        Marshal.append(arguments, to: m)
        return MessageBox(owning: m)
    }

    /// A method return for the call with `serial` from `sender`.
    static func methodReturn(serial: UInt32, destination: String?, arguments: [DBusValue]) throws -> MessageBox {
        try Marshal.check(arguments)
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN) else { throw DBusError.noMemory("out of memory") }
        _ = dbus_message_set_reply_serial(m, serial)
        dbus_message_set_no_reply(m, 1)
        if let destination, Marshal.isValidBusName(destination) { _ = dbus_message_set_destination(m, destination) }
        Marshal.append(arguments, to: m)
        return MessageBox(owning: m)
    }

    /// The reply to `call`: its values, or the error (also when the values cannot be encoded).
    static func reply(to call: IncomingCall, _ result: Result<[DBusValue], DBusError>) -> MessageBox? {
        switch result {
        case .success(let values):
            do { return try methodReturn(serial: call.serial, destination: call.sender, arguments: values) }
            catch { return self.error(serial: call.serial, destination: call.sender, error: ObjectTree.named(error)) }
        case .failure(let e):
            return self.error(serial: call.serial, destination: call.sender, error: e)
        }
    }

    /// An error reply for the call with `serial`; an invalid error name becomes `Failed`.
    static func error(serial: UInt32, destination: String?, error: DBusError) -> MessageBox? {
        var e = error
        if !Marshal.isValidErrorName(e.name) {
            e = .failed("\(e.name): \(e.message)")
        }
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR) else { return nil }
        _ = dbus_message_set_error_name(m, e.name)
        _ = dbus_message_set_reply_serial(m, serial)
        dbus_message_set_no_reply(m, 1)
        if let destination, Marshal.isValidBusName(destination) { _ = dbus_message_set_destination(m, destination) }
        let text = String(e.message.unicodeScalars.filter { $0 != "\0" })
        Marshal.append([.string(text)], to: m)
        return MessageBox(owning: m)
    }
}

/// A decoded incoming message header.
struct MessageHeader: Sendable {
    var type: Int32
    var serial: UInt32
    var replySerial: UInt32
    var sender: String
    var destination: String?
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var signature: String
    var noReply: Bool

    init(_ m: OpaquePointer) {
        func str(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        type = dbus_message_get_type(m)
        serial = dbus_message_get_serial(m)
        replySerial = dbus_message_get_reply_serial(m)
        sender = str(dbus_message_get_sender(m)) ?? ""
        destination = str(dbus_message_get_destination(m))
        path = str(dbus_message_get_path(m))
        interface = str(dbus_message_get_interface(m))
        member = str(dbus_message_get_member(m))
        errorName = str(dbus_message_get_error_name(m))
        signature = str(dbus_message_get_signature(m)) ?? ""
        noReply = dbus_message_get_no_reply(m) != 0
    }
}

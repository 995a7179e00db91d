internal import CDBus
import Synchronization
import XMLTree

/// The objects a connection exports, and the handling of incoming method calls:
/// routing, validation against the declared interfaces, and the standard interfaces
/// (Introspectable, Properties, Peer).
final class ObjectTree: Sendable {
    private let objects = Mutex<[String: [any DBusInterfaceHandler]]>([:])

    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let peer = "org.freedesktop.DBus.Peer"

    static let standardInterfaces: [DBusInterfaceDescription] = {
        let xml = """
        <node>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="props" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>
        </node>
        """
        return (try? DBusInterfaceDescription.parse(xml: xml)) ?? []
    }()

    func export(path: String, handlers: [any DBusInterfaceHandler]) {
        objects.withLock { o in
            if handlers.isEmpty { o[path] = nil } else { o[path] = handlers }
        }
    }

    func removeAll() {
        objects.withLock { $0.removeAll() }
    }

    func unexport(path: String) {
        _ = objects.withLock { $0.removeValue(forKey: path) }
    }

    /// The handlers exported at `path`: what a call needs, without `lookup`'s walk over every path for the children.
    private func handlers(at path: String) -> [any DBusInterfaceHandler]? { objects.withLock { $0[path] } }

    private func lookup(_ path: String) -> (handlers: [any DBusInterfaceHandler]?, children: [String]) {
        objects.withLock { o in
            let prefix = path == "/" ? "/" : path + "/"
            var children = Set<String>()
            for p in o.keys where p.hasPrefix(prefix) && p != path {
                if let first = p.dropFirst(prefix.count).split(separator: "/").first { children.insert(String(first)) }
            }
            return (o[path], children.sorted())
        }
    }

    /// Whether the handler of `call` answers it out of order (`DBusInterfaceHandler.answersOutOfOrder`).
    func answersOutOfOrder(_ call: IncomingCall) -> Bool {
        guard let exported = handlers(at: call.path) else { return false }
        // A property read is the named interface's to decide.
        if call.interface == Self.properties, call.member == "Get" || call.member == "GetAll",
           case .success(let arguments) = call.arguments, let name = arguments.first?.stringValue {
            return exported.first { $0.interface.name == name }?.answersOutOfOrder(call.member, arguments) ?? false
        }
        let handler = call.interface.map { name in exported.first { $0.interface.name == name } }
            ?? exported.first { $0.interface.method(named: call.member) != nil }
        guard let handler else { return false }
        guard case .success(let arguments) = call.arguments else { return handler.answersOutOfOrder(call.member) }
        return handler.answersOutOfOrder(call.member, arguments)
    }

    /// Handles one call; returns the reply (or error) to send, nil when no reply is wanted.
    func handle(_ call: IncomingCall) async -> Result<[DBusValue], DBusError> {
        let (found, children) = lookup(call.path)
        let arguments: [DBusValue]
        switch call.arguments {
        case .success(let a): arguments = a
        case .failure(let e): return .failure(e)
        }

        // Standard interfaces answered for any path that exists (exported or a parent).
        guard found != nil || !children.isEmpty else {
            return .failure(.unknownObject("no object at path '\(call.path)'"))
        }
        let handlers = found ?? []
        var interfaceName = call.interface
        if interfaceName == nil {
            // Find the method by name across the interfaces.
            if let h = handlers.first(where: { $0.interface.method(named: call.member) != nil }) {
                interfaceName = h.interface.name
            } else if let std = Self.standardInterfaces.first(where: { $0.method(named: call.member) != nil }) {
                interfaceName = std.name
            } else {
                return .failure(.unknownMethod("no method '\(call.member)' at '\(call.path)'"))
            }
        }
        let iface = interfaceName!

        if let std = Self.standardInterfaces.first(where: { $0.name == iface }),
           found != nil || iface != Self.properties {
            guard let method = std.method(named: call.member) else {
                return .failure(.unknownMethod("no method '\(call.member)' in interface '\(iface)'"))
            }
            guard call.signature == method.inSignature else {
                return .failure(.invalidArgs(
                    "\(iface).\(call.member) expects arguments '\(method.inSignature)', got '\(call.signature)'"))
            }
            switch iface {
            case Self.peer:
                if call.member == "Ping" { return .success([]) }
                return .success([.string(Self.machineID())])
            case Self.introspectable:
                return .success([.string(introspect(call.path, handlers: handlers, children: children))])
            default:
                return await properties(call.member, arguments, handlers: handlers)
            }
        }
        guard found != nil else {
            return .failure(.unknownInterface("no interface '\(iface)' at '\(call.path)'"))
        }
        guard let handler = handlers.first(where: { $0.interface.name == iface }) else {
            return .failure(.unknownInterface("no interface '\(iface)' at '\(call.path)'"))
        }
        guard let method = handler.interface.method(named: call.member) else {
            return .failure(.unknownMethod("no method '\(call.member)' in interface '\(iface)'"))
        }
        guard call.signature == method.inSignature else {
            return .failure(.invalidArgs(
                "\(iface).\(call.member) expects arguments '\(method.inSignature)', got '\(call.signature)'"))
        }
        do {
            return Self.checked(try await handler.call(call.member, arguments, from: call.sender), of: method, in: iface)
        } catch {
            return .failure(Self.named(error))
        }
    }

    /// The reply to a method call its handler carries out at once (`callAtOnce`), or nil: a call without an interface
    /// or to a standard one, a mismatch of arguments, and everything the handler declines go through `handle`.
    func immediateCall(_ call: IncomingCall) -> Result<[DBusValue], DBusError>? {
        guard let iface = call.interface, case .success(let arguments) = call.arguments,
              !Self.standardInterfaces.contains(where: { $0.name == iface }),
              let handler = handlers(at: call.path)?.first(where: { $0.interface.name == iface }),
              let method = handler.interface.method(named: call.member), call.signature == method.inSignature,
              let result = handler.callAtOnce(call.member, arguments, from: call.sender) else { return nil }
        return result.flatMap { Self.checked($0, of: method, in: iface) }
    }

    /// A handler's out-arguments, or an error when they do not have the method's declared out-signature.
    private static func checked(_ out: [DBusValue], of method: DBusInterfaceDescription.Method,
                                in iface: String) -> Result<[DBusValue], DBusError> {
        let sig = out.map(\.signature).concatenated
        guard sig == method.outSignature else {
            return .failure(.failed("\(iface).\(method.name) returned '\(sig)' but declares '\(method.outSignature)'"))
        }
        return .success(out)
    }

    /// The interface a `Properties.Get` or `GetAll` call reads; nil for any other call.
    static func readInterface(_ call: IncomingCall) -> String? {
        guard call.interface == properties, call.member == "Get" || call.member == "GetAll",
              case .success(let args) = call.arguments else { return nil }
        return args.first?.stringValue
    }

    /// The reply to a `Properties.Get`, or a `GetAll` of one interface, that its handler can answer at once
    /// (`currentValue`), or nil: everything else, errors included, goes through `handle`.
    func immediateReply(_ call: IncomingCall, if allowed: (String) -> Bool) -> [DBusValue]? {
        guard call.interface == Self.properties, case .success(let args) = call.arguments, let ifaceName = args.first?.stringValue,
              allowed(ifaceName), let handler = handlers(at: call.path)?.first(where: { $0.interface.name == ifaceName }) else { return nil }
        switch (call.member, call.signature) {
        case ("Get", "ss"):
            guard let name = args[1].stringValue, let property = handler.interface.property(named: name),
                  let value = Self.current(handler, property) else { return nil }
            return [.variant(value)]
        case ("GetAll", "s"):
            // All of them at once, or none: a mixed answer could pair values from different moments.
            var all: [String: DBusValue] = [:]
            for property in handler.interface.properties where property.access.isReadable {
                guard let value = Self.current(handler, property) else { return nil }
                all[property.name] = .variant(value)
            }
            return [.vardict(all)]
        default:
            return nil
        }
    }

    /// The reply to `Introspect` or a `Peer` call at a path that exists, or nil for any other call: they read only the
    /// exported objects, never a handler, so the loop thread answers them at once (a start keeping every worker busy
    /// held an Introspect 8-18 ms where any read was answered in well under one).
    func immediateStandardReply(_ call: IncomingCall) -> [DBusValue]? {
        guard call.interface == Self.introspectable || call.interface == Self.peer, call.signature.isEmpty else { return nil }
        let (found, children) = lookup(call.path)
        guard found != nil || !children.isEmpty else { return nil }
        switch (call.interface, call.member) {
        case (Self.introspectable, "Introspect"): return [.string(introspect(call.path, handlers: found ?? [], children: children))]
        case (Self.peer, "Ping"): return []
        case (Self.peer, "GetMachineId"): return [.string(Self.machineID())]
        default: return nil
        }
    }

    /// A readable property's `currentValue`, of its declared type, or nil.
    private static func current(_ handler: any DBusInterfaceHandler, _ property: DBusInterfaceDescription.Property) -> DBusValue? {
        guard property.access.isReadable, let value = handler.currentValue(property.name) else { return nil }
        return typed(value, for: property)
    }

    /// A handler's value as the property declares it (wrapped once more for a `v` property), or nil for another type.
    private static func typed(_ value: DBusValue, for property: DBusInterfaceDescription.Property) -> DBusValue? {
        let value = property.type == "v" && value.signature != "v" ? .variant(value) : value
        return value.signature == property.type ? value : nil
    }

    static func named(_ error: any Error) -> DBusError {
        if let e = error as? DBusError { return e }
        return .failed(String(describing: error))
    }

    private static func machineID() -> String {
        guard let p = dbus_try_get_local_machine_id(nil) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    // MARK: Properties

    private func properties(_ member: String, _ args: [DBusValue], handlers: [any DBusInterfaceHandler]) async
        -> Result<[DBusValue], DBusError>
    {
        let ifaceName = args.first?.stringValue ?? ""
        let handler = handlers.first { $0.interface.name == ifaceName }
        if member == "GetAll" {
            // An empty interface name means all of them.
            let chosen: [any DBusInterfaceHandler]
            if ifaceName.isEmpty { chosen = handlers }
            else if let handler { chosen = [handler] }
            else { return .failure(.unknownInterface("no interface '\(ifaceName)'")) }
            var all: [String: DBusValue] = [:]
            for h in chosen {
                for p in h.interface.properties where p.access.isReadable {
                    switch await read(h, p) {
                    case .success(let v): all[p.name] = v
                    case .failure(let e): return .failure(e)
                    }
                }
            }
            return .success([DBusValue.vardict(all)])
        }
        guard let handler else { return .failure(.unknownInterface("no interface '\(ifaceName)'")) }
        let propName = args.count > 1 ? (args[1].stringValue ?? "") : ""
        guard let property = handler.interface.property(named: propName) else {
            return .failure(.unknownProperty("no property '\(propName)' in interface '\(ifaceName)'"))
        }
        if member == "Get" {
            guard property.access.isReadable else {
                return .failure(.accessDenied("property '\(propName)' is write-only"))
            }
            return await read(handler, property).map { [$0] }
        }
        // Set
        guard property.access.isWritable else {
            return .failure(.propertyReadOnly("property '\(propName)' is read-only"))
        }
        guard args.count == 3, case .variant(let inner) = args[2] else {
            return .failure(.invalidArgs("Set expects a variant value"))
        }
        let value = property.type == "v" ? (inner.signature == "v" ? inner : .variant(inner)) : inner
        guard value.signature == property.type else {
            return .failure(.invalidArgs(
                "property '\(propName)' has type '\(property.type)', got a value of type '\(inner.signature)'"))
        }
        do {
            try await handler.set(propName, value)
            return .success([])
        } catch {
            return .failure(Self.named(error))
        }
    }

    /// Gets a property as a variant, checking the handler returned the declared type.
    private func read(_ handler: any DBusInterfaceHandler, _ p: DBusInterfaceDescription.Property) async
        -> Result<DBusValue, DBusError>
    {
        do {
            let v = try await handler.get(p.name)
            guard let typed = Self.typed(v, for: p) else {
                return .failure(.failed("property '\(p.name)' returned type '\(v.signature)' but declares '\(p.type)'"))
            }
            return .success(.variant(typed))
        } catch {
            return .failure(Self.named(error))
        }
    }

    // MARK: Introspection

    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    private func introspect(_ path: String, handlers: [any DBusInterfaceHandler], children: [String]) -> String {
        var out = Self.doctype + "<node>\n"
        var interfaces = Self.standardInterfaces
        if handlers.isEmpty { interfaces.removeAll { $0.name == Self.properties } }
        for i in interfaces { out += i.introspectionXML() }
        for h in handlers { out += h.interface.introspectionXML() }
        for c in children { out += "  <node name=\"\(xmlEscaped(c))\"/>\n" }
        out += "</node>\n"
        return out
    }
}

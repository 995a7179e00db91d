import XMLTree

/// An interface as declared in introspection XML (the XML files in `dbus/` are the contract).
public struct DBusInterfaceDescription: Sendable, Equatable {
    public enum Direction: String, Sendable, Equatable {
        case `in`, out
    }

    public enum Access: String, Sendable, Equatable {
        case read, write, readwrite
        public var isReadable: Bool { self != .write }
        public var isWritable: Bool { self != .read }
    }

    public struct Argument: Sendable, Equatable {
        public typealias Direction = DBusInterfaceDescription.Direction
        public var name: String?
        public var type: String
        /// As written in the XML; a method argument without one is an in argument.
        public var direction: Direction?
        public init(name: String? = nil, type: String, direction: Direction? = nil) {
            self.name = name
            self.type = type
            self.direction = direction
        }
    }

    public struct Method: Sendable, Equatable {
        public var name: String
        public var arguments: [Argument]
        public var annotations: [String: String]
        public init(name: String, arguments: [Argument] = [], annotations: [String: String] = [:]) {
            self.name = name
            self.arguments = arguments
            self.annotations = annotations
        }
        /// The in arguments' types, concatenated (arguments without a direction are in).
        public var inSignature: String { arguments.filter { $0.direction != .out }.map(\.type).concatenated }
        public var outSignature: String { arguments.filter { $0.direction == .out }.map(\.type).concatenated }
    }

    public struct Signal: Sendable, Equatable {
        public var name: String
        public var arguments: [Argument]
        public var annotations: [String: String]
        public init(name: String, arguments: [Argument] = [], annotations: [String: String] = [:]) {
            self.name = name
            self.arguments = arguments
            self.annotations = annotations
        }
        public var signature: String { arguments.map(\.type).concatenated }
    }

    public struct Property: Sendable, Equatable {
        public typealias Access = DBusInterfaceDescription.Access
        public var name: String
        public var type: String
        public var access: Access
        public var annotations: [String: String]
        public init(name: String, type: String, access: Access, annotations: [String: String] = [:]) {
            self.name = name
            self.type = type
            self.access = access
            self.annotations = annotations
        }
    }

    public var name: String
    public var methods: [Method]
    public var signals: [Signal]
    public var properties: [Property]
    public var annotations: [String: String]

    public init(name: String, methods: [Method] = [], signals: [Signal] = [], properties: [Property] = [],
                annotations: [String: String] = [:]) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
        self.annotations = annotations
    }

    public func method(named n: String) -> Method? { methods.first { $0.name == n } }
    public func signal(named n: String) -> Signal? { signals.first { $0.name == n } }
    public func property(named n: String) -> Property? { properties.first { $0.name == n } }

    // MARK: Parsing

    /// Parses a `<node>` document (or a bare `<interface>`) holding one or more `<interface>`s.
    /// Throws `DBusError.invalidArgs` on malformed XML, missing names or invalid type signatures.
    public static func parse(xml: String) throws -> [DBusInterfaceDescription] {
        let root: XMLElement
        do {
            root = try XMLElement.parse(xml, maximumDepth: 256, maximumElements: 100_000, doctype: .skipped)
        } catch {
            throw DBusError.invalidArgs("introspection XML: \(error)")
        }
        let interfaceElements: [XMLElement]
        switch root.name {
        case "node": interfaceElements = root.children.filter { $0.name == "interface" }
        case "interface": interfaceElements = [root]
        default: throw DBusError.invalidArgs("introspection XML: root element is <\(root.name)>, expected <node>")
        }
        return try interfaceElements.map(parseInterface)
    }

    private static func required(_ e: XMLElement, _ attribute: String) throws -> String {
        guard let v = e.attributes[attribute] else {
            throw DBusError.invalidArgs("introspection XML: <\(e.name)> without \(attribute)")
        }
        return v
    }

    private static func annotations(_ e: XMLElement) throws -> [String: String] {
        var result: [String: String] = [:]
        for a in e.children where a.name == "annotation" {
            result[try required(a, "name")] = a.attributes["value"] ?? ""
        }
        return result
    }

    private static func type(_ e: XMLElement) throws -> String {
        let t = try required(e, "type")
        guard Marshal.isValidSingleType(t) else {
            throw DBusError.invalidArgs("introspection XML: '\(t)' is not a single complete type")
        }
        return t
    }

    private static func arguments(_ e: XMLElement) throws -> [Argument] {
        try e.children.filter { $0.name == "arg" }.map { a in
            var direction: Direction?
            if let d = a.attributes["direction"] {
                guard let dir = Direction(rawValue: d) else {
                    throw DBusError.invalidArgs("introspection XML: direction '\(d)'")
                }
                direction = dir
            }
            return Argument(name: a.attributes["name"], type: try type(a), direction: direction)
        }
    }

    private static func parseInterface(_ e: XMLElement) throws -> DBusInterfaceDescription {
        let name = try required(e, "name")
        guard Marshal.isValidInterface(name) else { throw DBusError.invalidArgs("introspection XML: interface name '\(name)'") }
        var result = DBusInterfaceDescription(name: name, annotations: try annotations(e))
        for c in e.children {
            switch c.name {
            case "method":
                let m = Method(name: try required(c, "name"), arguments: try arguments(c), annotations: try annotations(c))
                guard Marshal.isValidMember(m.name) else { throw DBusError.invalidArgs("introspection XML: method name '\(m.name)'") }
                result.methods.append(m)
            case "signal":
                let s = Signal(name: try required(c, "name"), arguments: try arguments(c), annotations: try annotations(c))
                guard Marshal.isValidMember(s.name) else { throw DBusError.invalidArgs("introspection XML: signal name '\(s.name)'") }
                result.signals.append(s)
            case "property":
                let accessText = try required(c, "access")
                guard let access = Access(rawValue: accessText) else {
                    throw DBusError.invalidArgs("introspection XML: access '\(accessText)'")
                }
                result.properties.append(Property(name: try required(c, "name"), type: try type(c), access: access,
                                                  annotations: try annotations(c)))
            default:
                continue
            }
        }
        return result
    }

    // MARK: Serialising

    /// The `<interface>` element, canonically serialised (two-space indent per level, one
    /// element per line, annotations sorted by name after the arguments).
    public func introspectionXML() -> String { introspectionXML(indent: "  ") }

    func introspectionXML(indent: String) -> String {
        let i1 = indent, i2 = indent + "  ", i3 = indent + "    "
        var out = "\(i1)<interface name=\"\(xmlEscaped(name))\">\n"
        func annotationLines(_ a: [String: String], _ ind: String) {
            for key in a.keys.sorted() {
                out += "\(ind)<annotation name=\"\(xmlEscaped(key))\" value=\"\(xmlEscaped(a[key]!))\"/>\n"
            }
        }
        func argLine(_ a: Argument) {
            var s = "\(i3)<arg"
            if let n = a.name { s += " name=\"\(xmlEscaped(n))\"" }
            s += " type=\"\(xmlEscaped(a.type))\""
            if let d = a.direction { s += " direction=\"\(d.rawValue)\"" }
            out += s + "/>\n"
        }
        for m in methods {
            if m.arguments.isEmpty && m.annotations.isEmpty {
                out += "\(i2)<method name=\"\(xmlEscaped(m.name))\"/>\n"
                continue
            }
            out += "\(i2)<method name=\"\(xmlEscaped(m.name))\">\n"
            m.arguments.forEach(argLine)
            annotationLines(m.annotations, i3)
            out += "\(i2)</method>\n"
        }
        for s in signals {
            if s.arguments.isEmpty && s.annotations.isEmpty {
                out += "\(i2)<signal name=\"\(xmlEscaped(s.name))\"/>\n"
                continue
            }
            out += "\(i2)<signal name=\"\(xmlEscaped(s.name))\">\n"
            s.arguments.forEach(argLine)
            annotationLines(s.annotations, i3)
            out += "\(i2)</signal>\n"
        }
        for p in properties {
            let open = "\(i2)<property name=\"\(xmlEscaped(p.name))\" type=\"\(xmlEscaped(p.type))\" access=\"\(p.access.rawValue)\""
            if p.annotations.isEmpty {
                out += open + "/>\n"
            } else {
                out += open + ">\n"
                annotationLines(p.annotations, i3)
                out += "\(i2)</property>\n"
            }
        }
        annotationLines(annotations, i2)
        out += "\(i1)</interface>\n"
        return out
    }
}

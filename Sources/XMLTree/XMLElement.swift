/// The one XML reader of the daemon, for what it reads from outside (UPnP controllers' SOAP envelopes, DIDL-Lite and
/// GENA bodies, XSPF playlists, D-Bus introspection): elements, attributes and text, namespace prefixes dropped.
/// No entity can be declared and nothing outside the document is ever read; size and depth are bounded.
public struct XMLElement: Sendable, Equatable {
    /// The element's local name (`s:Body` is `Body`).
    public var name: String
    /// Attributes by local name.
    public var attributes: [String: String]
    public var children: [XMLElement]
    /// The element's own text, entities replaced.
    public var text: String

    public init(name: String, attributes: [String: String] = [:], children: [XMLElement] = [], text: String = "") {
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child named `name`.
    public func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }

    /// The first element named `name` at any depth below this one.
    public func find(_ name: String) -> XMLElement? {
        for child in children {
            if child.name == name { return child }
            if let found = child.find(name) { return found }
        }
        return nil
    }

    /// Reads one document; throws `XMLError` for anything malformed, a refused DOCTYPE, or more than the limits allow.
    public static func parse(_ text: String, maximumDepth: Int = 32, maximumElements: Int = 10_000,
                             doctype: Doctype = .refused) throws(XMLError) -> XMLElement {
        var reader = XMLReader(Array(text.utf8), maximumDepth: maximumDepth, maximumElements: maximumElements, doctype: doctype)
        return try reader.document()
    }

    /// What a document type declaration before the root does.
    public enum Doctype: Sendable {
        /// The document is refused (what a network peer sends has no business declaring one).
        case refused
        /// It is passed over unread, internal subset included: an entity it declares stays unknown, so a reference
        /// to it is refused (D-Bus introspection documents and playlists carry a DOCTYPE naming their DTD).
        case skipped
    }
}

/// Why an XML text was not taken.
public struct XMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

private struct XMLReader {
    let bytes: [UInt8]
    var at = 0
    let maximumDepth: Int
    var elementsLeft: Int
    let doctype: XMLElement.Doctype

    init(_ bytes: [UInt8], maximumDepth: Int, maximumElements: Int, doctype: XMLElement.Doctype) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        elementsLeft = maximumElements
        self.doctype = doctype
    }

    mutating func document() throws(XMLError) -> XMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { at = 3 }
        try skipMisc()
        guard peek("<") else { throw XMLError("no root element") }
        let root = try element(depth: 0)
        try skipMisc()
        guard at == bytes.count else { throw XMLError("text after the root element") }
        return root
    }

    /// Whitespace, the XML declaration, comments and processing instructions; a DOCTYPE as `doctype` says.
    mutating func skipMisc() throws(XMLError) {
        while true {
            skipSpace()
            if peek("<?") {
                try skip(past: "?>")
            } else if peek("<!--") {
                try skip(past: "-->")
            } else if peek("<!") {
                guard doctype == .skipped, peek("<!DOCTYPE") else { throw XMLError("a document type declaration is not accepted") }
                try skipDeclaration()
            } else {
                return
            }
        }
    }

    /// A `<!DOCTYPE …>` with its internal subset in brackets, quoted literals taken whole.
    mutating func skipDeclaration() throws(XMLError) {
        var depth = 0
        var quote: UInt8?
        while at < bytes.count {
            let b = bytes[at]
            at += 1
            if let q = quote {
                if b == q { quote = nil }
            } else if b == 0x22 || b == 0x27 {
                quote = b
            } else if b == 0x5B {
                depth += 1
            } else if b == 0x5D {
                depth -= 1
            } else if b == 0x3E, depth <= 0 {
                return
            }
        }
        throw XMLError("the document ends inside its document type declaration")
    }

    mutating func element(depth: Int) throws(XMLError) -> XMLElement {
        guard depth < maximumDepth else { throw XMLError("nested deeper than \(maximumDepth) elements") }
        elementsLeft -= 1
        guard elementsLeft >= 0 else { throw XMLError("too many elements") }
        at += 1  // <
        let qualified = name()
        guard !qualified.isEmpty else { throw XMLError("an element without a name") }
        var element = XMLElement(name: Self.local(qualified))
        while true {
            skipSpace()
            if peek("/>") { at += 2; return element }
            if peek(">") { at += 1; break }
            let attribute = name()
            guard !attribute.isEmpty else { throw XMLError("a malformed attribute in <\(qualified)>") }
            skipSpace()
            guard peek("=") else { throw XMLError("attribute \(attribute) has no value") }
            at += 1
            skipSpace()
            guard at < bytes.count, bytes[at] == 0x22 || bytes[at] == 0x27 else { throw XMLError("attribute \(attribute) is not quoted") }
            let quote = bytes[at]
            at += 1
            let start = at
            while at < bytes.count, bytes[at] != quote { at += 1 }
            guard at < bytes.count else { throw XMLError("the document ends inside an attribute") }
            let value = try Self.unescape(bytes[start..<at])
            at += 1
            if !attribute.hasPrefix("xmlns") { element.attributes[Self.local(attribute)] = value }
        }
        var text = ""
        while true {
            guard at < bytes.count else { throw XMLError("<\(qualified)> is not closed") }
            if peek("</") {
                at += 2
                let closing = name()
                guard closing == qualified else { throw XMLError("<\(qualified)> is closed by </\(closing)>") }
                skipSpace()
                guard peek(">") else { throw XMLError("a malformed closing tag </\(closing)") }
                at += 1
                element.text = text
                return element
            } else if peek("<!--") {
                try skip(past: "-->")
            } else if peek("<![CDATA[") {
                at += 9
                let start = at
                try skip(past: "]]>")
                text += String(decoding: bytes[start..<(at - 3)], as: UTF8.self)
            } else if peek("<!") || peek("<?") {
                throw XMLError("a declaration inside an element is not accepted")
            } else if peek("<") {
                element.children.append(try self.element(depth: depth + 1))
            } else {
                let start = at
                while at < bytes.count, bytes[at] != 0x3C { at += 1 }
                text += try Self.unescape(bytes[start..<at])
            }
        }
    }

    mutating func name() -> String {
        let start = at
        while at < bytes.count {
            let b = bytes[at]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x3E || b == 0x2F || b == 0x3D { break }
            at += 1
        }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D { at += 1 }
    }

    func peek(_ s: StaticString) -> Bool {
        let count = s.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        return s.withUTF8Buffer { buffer in
            for i in 0..<count where bytes[at + i] != buffer[i] { return false }
            return true
        }
    }

    mutating func skip(past end: StaticString) throws(XMLError) {
        while at < bytes.count {
            if peek(end) { at += end.utf8CodeUnitCount; return }
            at += 1
        }
        throw XMLError("the document ends before \(end)")
    }

    static func local(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }

    /// Replaces the five predefined entities and character references; any other entity is refused.
    static func unescape(_ raw: ArraySlice<UInt8>) throws(XMLError) -> String {
        guard raw.contains(0x26) else { return String(decoding: raw, as: UTF8.self) }
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        var i = raw.startIndex
        while i < raw.endIndex {
            guard raw[i] == 0x26 else { out.append(raw[i]); i += 1; continue }
            guard let semicolon = raw[i...].prefix(12).firstIndex(of: 0x3B) else { throw XMLError("an unterminated entity") }
            let entity = String(decoding: raw[(i + 1)..<semicolon], as: UTF8.self)
            switch entity {
            case "lt": out.append(0x3C)
            case "gt": out.append(0x3E)
            case "amp": out.append(0x26)
            case "quot": out.append(0x22)
            case "apos": out.append(0x27)
            default:
                let digits = entity.dropFirst()
                let code = entity.hasPrefix("#x") ? UInt32(digits.dropFirst(), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(digits) : nil
                guard let code, let scalar = Unicode.Scalar(code) else { throw XMLError("an unknown entity &\(entity);") }
                out += Array(String(Character(scalar)).utf8)
            }
            i = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Text made safe to put inside an XML element or a quoted attribute.
public func xmlEscaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for c in text.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

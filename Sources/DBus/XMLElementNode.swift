/// A minimal XML reader for introspection documents: elements and attributes; text, comments,
/// processing instructions and the DOCTYPE are skipped. Enough for D-Bus introspection XML.
struct XMLElementNode: Sendable, Equatable {
    var name: String
    var attributes: [String: String]
    var children: [XMLElementNode]

    static func parseDocument(_ text: String) throws -> XMLElementNode {
        var p = Parser(bytes: Array(text.utf8))
        return try p.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0
        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ what: String) -> DBusError {
            DBusError.invalidArgs("introspection XML: \(what) at byte \(i)")
        }

        func starts(_ s: String) -> Bool {
            let u = Array(s.utf8)
            guard i + u.count <= bytes.count else { return false }
            return Array(bytes[i..<(i + u.count)]) == u
        }

        mutating func skip(past s: String) throws {
            let u = Array(s.utf8)
            while i + u.count <= bytes.count {
                if Array(bytes[i..<(i + u.count)]) == u { i += u.count; return }
                i += 1
            }
            throw fail("unterminated markup (expected '\(s)')")
        }

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        /// Skips text, comments, PIs and DOCTYPE up to the next element tag (`<x` or `</`).
        mutating func skipMisc() throws {
            while i < bytes.count {
                if bytes[i] != UInt8(ascii: "<") { i += 1; continue }
                if starts("<!--") { try skip(past: "-->") }
                else if starts("<?") { try skip(past: "?>") }
                else if starts("<![CDATA[") { try skip(past: "]]>") }
                else if starts("<!") { try skipDeclaration() }
                else { return }
            }
        }

        mutating func skipDeclaration() throws {
            var depth = 0
            while i < bytes.count {
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "[") { depth += 1 }
                else if c == UInt8(ascii: "]") { depth -= 1 }
                else if c == UInt8(ascii: ">") && depth <= 0 { return }
            }
            throw fail("unterminated declaration")
        }

        mutating func document() throws -> XMLElementNode {
            try skipMisc()
            guard i < bytes.count else { throw fail("no root element") }
            let root = try element(depth: 0)
            try skipMisc()
            guard i >= bytes.count else { throw fail("content after the root element") }
            return root
        }

        mutating func nameToken() throws -> String {
            let start = i
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: "/") || c == UInt8(ascii: ">")
                    || c == UInt8(ascii: "=") || c == UInt8(ascii: "<") { break }
                i += 1
            }
            guard i > start else { throw fail("expected a name") }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }

        mutating func element(depth: Int) throws -> XMLElementNode {
            guard depth < 256 else { throw fail("elements nested too deeply") }
            guard i < bytes.count, bytes[i] == UInt8(ascii: "<") else { throw fail("expected '<'") }
            i += 1
            let name = try nameToken()
            var node = XMLElementNode(name: name, attributes: [:], children: [])
            while true {
                skipSpace()
                guard i < bytes.count else { throw fail("unterminated tag <\(name)>") }
                if bytes[i] == UInt8(ascii: "/") {
                    i += 1
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw fail("expected '>'") }
                    i += 1
                    return node
                }
                if bytes[i] == UInt8(ascii: ">") { i += 1; break }
                let attr = try nameToken()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { throw fail("expected '=' after \(attr)") }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                    throw fail("expected a quoted value for \(attr)")
                }
                let quote = bytes[i]
                i += 1
                let start = i
                while i < bytes.count, bytes[i] != quote { i += 1 }
                guard i < bytes.count else { throw fail("unterminated attribute value") }
                node.attributes[attr] = try decodeEntities(String(decoding: bytes[start..<i], as: UTF8.self))
                i += 1
            }
            // Content.
            while true {
                try skipMisc()
                guard i < bytes.count else { throw fail("unterminated element <\(name)>") }
                if starts("</") {
                    i += 2
                    let closing = try nameToken()
                    guard closing == name else { throw fail("</\(closing)> closes <\(name)>") }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw fail("expected '>'") }
                    i += 1
                    return node
                }
                node.children.append(try element(depth: depth + 1))
            }
        }

        func decodeEntities(_ s: String) throws -> String {
            guard s.contains("&") else { return s }
            var out = ""
            var rest = Substring(s)
            while let amp = rest.firstIndex(of: "&") {
                out += rest[..<amp]
                guard let semi = rest[amp...].firstIndex(of: ";") else { throw fail("unterminated entity") }
                let entity = rest[rest.index(after: amp)..<semi]
                switch entity {
                case "amp": out += "&"
                case "lt": out += "<"
                case "gt": out += ">"
                case "quot": out += "\""
                case "apos": out += "'"
                default:
                    var code: UInt32?
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X") { code = UInt32(entity.dropFirst(2), radix: 16) }
                    else if entity.hasPrefix("#") { code = UInt32(entity.dropFirst()) }
                    guard let c = code, let scalar = Unicode.Scalar(c) else { throw fail("unknown entity &\(entity);") }
                    out.unicodeScalars.append(scalar)
                }
                rest = rest[rest.index(after: semi)...]
            }
            out += rest
            return out
        }
    }
}

import Foundation

/// A JSON value as the web face writes it: `null` where the contract says null (Codable would leave the key out),
/// and one encoder for every answer and event.
public indirect enum JSON: Sendable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    /// Keys in the order written.
    case object([(String, JSON)])

    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }

    /// `value` or null.
    static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    static func int(_ value: Int?) -> JSON { value.map { .int(Int64($0)) } ?? .null }
    /// Microseconds as seconds (null when nil).
    static func seconds(micro value: Int64?) -> JSON { value.map { .double(Double($0) / 1e6) } ?? .null }

    /// The UTF-8 text.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(to: &out)
        return out
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                // Whole numbers without ".0" noise, fractions to the microsecond (Swift's shortest form is valid
                // JSON; no formatter, which would load ICU).
                if d == d.rounded(), abs(d) < 1e15 { out.append(contentsOf: String(Int64(d)).utf8) } else {
                    let micro = abs(d) < 1e12 ? (d * 1e6).rounded() / 1e6 : d
                    out.append(contentsOf: "\(micro)".utf8)
                }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            Self.write(members: members, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// An object's members without its braces, comma-separated.
    static func write(members: [(String, JSON)], to out: inout [UInt8]) {
        for (i, (key, value)) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            writeString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            value.write(to: &out)
        }
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole, not a byte at a time.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// A request body, read as JSON with the types each route asks for; any mistake is a 400 that says what was wrong.
struct Body: Sendable {
    let fields: [String: JSONField]

    /// Parses `bytes` as one JSON object.
    init(_ bytes: [UInt8]) throws(WebProblem) {
        guard !bytes.isEmpty else { fields = [:]; return }
        guard let value = try? JSONDecoder().decode(JSONField.self, from: Data(bytes)) else {
            throw WebProblem.badRequest("the body is not JSON")
        }
        guard case .object(let fields) = value else { throw WebProblem.badRequest("the body must be a JSON object") }
        self.fields = fields
    }

    /// Refuses keys the route does not know (the contract says `additionalProperties: false`).
    func only(_ known: Set<String>) throws(WebProblem) {
        if let unknown = fields.keys.first(where: { !known.contains($0) }) {
            throw WebProblem.badRequest("unknown field '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    func number(_ key: String) throws(WebProblem) -> Double? {
        guard let field = fields[key] else { return nil }
        guard case .number(let n) = field, n.isFinite else { throw WebProblem.badRequest("'\(key)' must be a number") }
        return n
    }

    func requiredNumber(_ key: String) throws(WebProblem) -> Double {
        guard let n = try number(key) else { throw WebProblem.badRequest("'\(key)' is missing") }
        return n
    }

    func string(_ key: String) throws(WebProblem) -> String? {
        guard let field = fields[key] else { return nil }
        guard case .string(let s) = field else { throw WebProblem.badRequest("'\(key)' must be a string") }
        return s
    }

    func requiredString(_ key: String) throws(WebProblem) -> String {
        guard let s = try string(key) else { throw WebProblem.badRequest("'\(key)' is missing") }
        return s
    }

    func bool(_ key: String) throws(WebProblem) -> Bool? {
        guard let field = fields[key] else { return nil }
        guard case .bool(let b) = field else { throw WebProblem.badRequest("'\(key)' must be true or false") }
        return b
    }
}

/// One field of a request body.
indirect enum JSONField: Sendable, Decodable {
    case null, bool(Bool), number(Double), string(String), array([JSONField]), object([String: JSONField])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSONField].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONField].self))
        }
    }
}

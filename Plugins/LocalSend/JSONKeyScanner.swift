/// Reads the keys of one object in a JSON text in order, skipping every value: just enough JSON for
/// `LocalSendMessages.fileOrder` (a full parse is JSONDecoder's job).
struct JSONKeyScanner {
    private let bytes: [UInt8]
    private var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The keys of the object that is the value of `name` in the top-level object.
    mutating func keysOfTopLevelObject(named name: String) -> [String] {
        i = 0
        guard skipSpace(), peek == UInt8(ascii: "{") else { return [] }
        i += 1
        while skipSpace(), peek == UInt8(ascii: "\"") {
            guard let key = string(), skipSpace(), peek == UInt8(ascii: ":") else { return [] }
            i += 1
            guard skipSpace() else { return [] }
            if key == name {
                return peek == UInt8(ascii: "{") ? keysOfObject() : []
            }
            guard skipValue(), skipSpace() else { return [] }
            if peek == UInt8(ascii: ",") { i += 1 } else { return [] }
        }
        return []
    }

    private var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    /// Skips white space; false at the end of the text.
    private mutating func skipSpace() -> Bool {
        while let c = peek, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 }
        return i < bytes.count
    }

    private mutating func keysOfObject() -> [String] {
        var keys: [String] = []
        i += 1
        while skipSpace() {
            if peek == UInt8(ascii: "}") { return keys }
            guard let key = string(), skipSpace(), peek == UInt8(ascii: ":") else { return keys }
            i += 1
            keys.append(key)
            guard skipSpace(), skipValue(), skipSpace() else { return keys }
            if peek == UInt8(ascii: ",") { i += 1 }
        }
        return keys
    }

    /// A string at `i` (which must be a quote), its escapes decoded the simple way; nil when broken.
    private mutating func string() -> String? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        i += 1
        var out: [UInt8] = []
        while let c = peek {
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if c == UInt8(ascii: "\\"), let e = peek {
                i += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard i + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16) else { return nil }
                    i += 4
                    out += Array(String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}").utf8)
                default: out.append(e)
                }
                continue
            }
            out.append(c)
        }
        return nil
    }

    /// Skips one value (object, array, string, number, literal); false when the text is broken.
    private mutating func skipValue() -> Bool {
        guard let c = peek else { return false }
        if c == UInt8(ascii: "\"") { return string() != nil }
        if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
            var depth = 0
            while let d = peek {
                if d == UInt8(ascii: "\"") {
                    guard string() != nil else { return false }
                    continue
                }
                i += 1
                if d == UInt8(ascii: "{") || d == UInt8(ascii: "[") { depth += 1 }
                if d == UInt8(ascii: "}") || d == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return true }
                }
            }
            return false
        }
        while let d = peek, d != UInt8(ascii: ","), d != UInt8(ascii: "}"), d != UInt8(ascii: "]"),
              d != 0x20, d != 0x0A, d != 0x0D, d != 0x09 { i += 1 }
        return true
    }
}

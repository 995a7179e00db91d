/// Splits one request line into a command name and its arguments the way mpd's tokenizer does: the name is a word of
/// letters, digits and `_`; arguments are bare words or strings in double quotes (backslash escapes the next byte)
/// or single quotes (taken literally), each followed by white space or the end of the line.
public enum CommandTokenizer {
    /// The name and the arguments of `line` (no newline); throws mpd's ACK for a malformed line.
    public static func tokenize(_ line: String) throws(MPDAck) -> (name: String, arguments: [String]) {
        var bytes = Array(line.utf8)[...]
        skipSpace(&bytes)
        guard let first = bytes.first else { throw MPDAck(.unknown, "No command given") }
        let name = Array(bytes.prefix { !isSpace($0) })
        bytes.removeFirst(name.count)
        guard isLetter(first), name.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }) else {
            throw MPDAck(.unknown, "unknown command \"\(String(decoding: name, as: UTF8.self))\"")
        }
        let command = String(decoding: name, as: UTF8.self)
        var arguments: [String] = []
        while true {
            skipSpace(&bytes)
            guard let b = bytes.first else { break }
            do {
                arguments.append(try argument(b, &bytes))
            } catch {
                throw MPDAck(error.code, error.message, command: command)
            }
        }
        return (command, arguments)
    }

    private static func argument(_ b: UInt8, _ bytes: inout ArraySlice<UInt8>) throws(MPDAck) -> String {
        var out: [UInt8] = []
        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
            bytes.removeFirst()
            var closed = false
            while let c = bytes.popFirst() {
                if c == b { closed = true; break }
                if c == UInt8(ascii: "\\") && b == UInt8(ascii: "\"") {
                    guard let escaped = bytes.popFirst() else { break }
                    out.append(escaped)
                } else {
                    out.append(c)
                }
            }
            guard closed else { throw MPDAck(.arg, "Missing closing '\(Character(Unicode.Scalar(b)))'") }
            if let next = bytes.first, !isSpace(next) { throw MPDAck(.arg, "Space expected after closing '\(Character(Unicode.Scalar(b)))'") }
        } else {
            while let c = bytes.first, !isSpace(c) {
                guard c != UInt8(ascii: "\"") && c != UInt8(ascii: "'") else { throw MPDAck(.arg, "Invalid unquoted character") }
                out.append(c)
                bytes.removeFirst()
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Quotes a value for a reply or a request: in double quotes when it needs any, with `"` and `\` escaped.
    public static func quote(_ value: String) -> String {
        var out = "\""
        for c in value.unicodeScalars {
            if c == "\"" || c == "\\" { out.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out + "\""
    }

    private static func skipSpace(_ bytes: inout ArraySlice<UInt8>) {
        while let b = bytes.first, isSpace(b) { bytes.removeFirst() }
    }
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0d }
    static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}

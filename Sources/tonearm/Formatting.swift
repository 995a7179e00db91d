/// Times as people write them: `83`, `1:23`, `1:02:03`, `83.5`.
enum TimeText {
    /// `m:ss`, or `h:mm:ss` from an hour on; negative times count as 0.
    static func format(microseconds: Int64) -> String {
        let total = max(0, microseconds) / 1_000_000
        let hours = total / 3600
        let minutes = (total % 3600) / 60
        let seconds = total % 60
        func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if hours > 0 { return "\(hours):\(twoDigits(minutes)):\(twoDigits(seconds))" }
        return "\(minutes):\(twoDigits(seconds))"
    }

    /// Seconds from `N`, `N.N`, `m:ss` or `h:mm:ss` (no sign); nil if malformed.
    static func parseSeconds(_ text: Substring) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = Double(part), value.isFinite
            else { return nil }
            // Minutes and seconds after a colon stay below 60.
            if index > 0, value >= 60 { return nil }
            seconds = seconds * 60 + value
        }
        return seconds
    }

    /// Microseconds in `seconds`, rounded.
    static func microseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1_000_000).rounded())
    }
}

/// A tiny JSON writer that keeps key order and writes nulls.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case number(Double)
    /// A whole number, written without a fraction ("12").
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
    static func integer(_ value: Int64?) -> JSONValue { value.map(JSONValue.integer) ?? .null }

    var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let value):
            // Always with a fraction or exponent ("296.0"), so readers see a double.
            output += value.isFinite ? String(value) : "null"
        case .integer(let value): output += String(value)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

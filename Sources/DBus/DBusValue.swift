/// A D-Bus value with its type.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array; `element` is the element's signature, e.g. "s", "o", "a{sv}".
    case array(element: String, [DBusValue])
    /// A dictionary `a{kv}`; `key` must be a basic type.
    case dictionary(key: String, value: String, [DBusDictEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's D-Bus type signature, e.g. "a{sv}".
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).concatenated + ")"
        case .variant: return "v"
        }
    }

    // MARK: Conveniences

    /// An `as`.
    public static func stringArray(_ s: [String]) -> DBusValue {
        .array(element: "s", s.map { .string($0) })
    }

    /// An `ao`.
    public static func objectPathArray(_ s: [String]) -> DBusValue {
        .array(element: "o", s.map { .objectPath($0) })
    }

    /// An `a{sv}`: values are wrapped in `.variant` (unless they already are one), keys sorted.
    public static func vardict(_ d: [String: DBusValue]) -> DBusValue {
        .dictionary(key: "s", value: "v", d.keys.sorted().map { key in
            let v = d[key]!
            if case .variant = v { return DBusDictEntry(key: .string(key), value: v) }
            return DBusDictEntry(key: .string(key), value: .variant(v))
        })
    }

    /// The value with all enclosing variants stripped.
    public var unwrapped: DBusValue {
        var v = self
        while case .variant(let inner) = v { v = inner }
        return v
    }

    /// `.string`, `.objectPath` or `.signature` (looks through variants).
    public var stringValue: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        default: return nil
        }
    }

    /// `.bool` (looks through variants).
    public var boolValue: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    /// `.double` (looks through variants).
    public var doubleValue: Double? {
        if case .double(let d) = unwrapped { return d }
        return nil
    }

    /// Any integer case as `Int64` (looks through variants); nil for a `uint64` beyond `Int64.max`.
    public var int64Value: Int64? {
        switch unwrapped {
        case .byte(let v): return Int64(v)
        case .int16(let v): return Int64(v)
        case .uint16(let v): return Int64(v)
        case .int32(let v): return Int64(v)
        case .uint32(let v): return Int64(v)
        case .int64(let v): return v
        case .uint64(let v): return Int64(exactly: v)
        default: return nil
        }
    }

    /// The elements of an `.array` (looks through variants).
    public var arrayValue: [DBusValue]? {
        if case .array(_, let items) = unwrapped { return items }
        return nil
    }

    /// The entries of a `.dictionary` (looks through variants).
    public var dictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// An `a{sv}` (or any string-keyed dictionary) as a Swift dictionary of the *unwrapped* values.
    public var vardictValue: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }
}

/// One entry of a D-Bus dictionary (`{kv}`).
public struct DBusDictEntry: Sendable, Equatable {
    public var key: DBusValue
    public var value: DBusValue
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): return "byte \(v)"
        case .bool(let v): return "\(v)"
        case .int16(let v): return "int16 \(v)"
        case .uint16(let v): return "uint16 \(v)"
        case .int32(let v): return "int32 \(v)"
        case .uint32(let v): return "uint32 \(v)"
        case .int64(let v): return "int64 \(v)"
        case .uint64(let v): return "uint64 \(v)"
        case .double(let v): return "\(v)"
        case .string(let v): return "\"\(v)\""
        case .objectPath(let v): return "path \(v)"
        case .signature(let v): return "signature \(v)"
        case .array(let element, let items): return "a\(element)[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            return "{" + entries.map { "\($0.key.description): \($0.value.description)" }.joined(separator: ", ") + "}"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): return "<\(v.description)>"
        }
    }
}

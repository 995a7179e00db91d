internal import CDBus

/// Converting `DBusValue`s to and from libdbus messages, and checking names and values
/// before they reach libdbus (whose failed argument checks abort the process).
enum Marshal {
    /// Deepest nesting of containers (arrays, dict entries, structs, variants) we write or read.
    static let maxDepth = 64
    /// Most values decoded from one message; a bigger message is refused rather than decoded.
    static let maxDecodedValues = 4_000_000

    // MARK: Names

    static func isValidPath(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_path(s, nil) != 0 }
    static func isValidInterface(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_interface(s, nil) != 0 }
    static func isValidMember(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_member(s, nil) != 0 }
    static func isValidBusName(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_bus_name(s, nil) != 0 }
    static func isValidErrorName(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_error_name(s, nil) != 0 }
    /// A valid signature of zero or more complete types.
    static func isValidSignature(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_signature_validate(s, nil) != 0 }
    /// A valid signature of exactly one complete type.
    static func isValidSingleType(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_signature_validate_single(s, nil) != 0 }

    static func checkPath(_ s: String) throws {
        guard isValidPath(s) else { throw DBusError.invalidArgs("invalid object path '\(s)'") }
    }
    static func checkInterface(_ s: String) throws {
        guard isValidInterface(s) else { throw DBusError.invalidArgs("invalid interface name '\(s)'") }
    }
    static func checkMember(_ s: String) throws {
        guard isValidMember(s) else { throw DBusError.invalidArgs("invalid member name '\(s)'") }
    }
    static func checkBusName(_ s: String) throws {
        guard isValidBusName(s) else { throw DBusError.invalidArgs("invalid bus name '\(s)'") }
    }

    // MARK: Values

    /// Throws `InvalidArgs` unless `values` can be marshalled as a message body.
    static func check(_ values: [DBusValue]) throws {
        for v in values { try check(v, depth: 0) }
        let sig = values.map(\.signature).concatenated
        guard isValidSignature(sig) else {
            throw DBusError.invalidArgs("invalid body signature '\(sig)' (too long or nested too deeply)")
        }
    }

    private static func check(_ v: DBusValue, depth: Int) throws {
        guard depth < maxDepth else { throw DBusError.invalidArgs("value nested more than \(maxDepth) levels deep") }
        switch v {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            return
        case .string(let s):
            guard !s.utf8.contains(0) else { throw DBusError.invalidArgs("string contains a NUL character") }
        case .objectPath(let p):
            try checkPath(p)
        case .signature(let g):
            guard isValidSignature(g) else { throw DBusError.invalidArgs("invalid signature '\(g)'") }
        case .array(let element, let items):
            guard isValidSingleType(element) else { throw DBusError.invalidArgs("invalid array element type '\(element)'") }
            guard !element.hasPrefix("{") else { throw DBusError.invalidArgs("use .dictionary for '\(element)'") }
            for item in items {
                let s = item.signature
                guard s == element else {
                    throw DBusError.invalidArgs("array of '\(element)' holds a value of type '\(s)'")
                }
                try check(item, depth: depth + 1)
            }
        case .dictionary(let key, let value, let entries):
            guard key.utf8.count == 1, let k = key.utf8.first, dbus_type_is_basic(Int32(k)) != 0 else {
                throw DBusError.invalidArgs("dictionary key type '\(key)' is not a basic type")
            }
            guard isValidSingleType(value) else { throw DBusError.invalidArgs("invalid dictionary value type '\(value)'") }
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == value else {
                    throw DBusError.invalidArgs(
                        "dictionary of '{\(key)\(value)}' holds an entry of type '{\(entry.key.signature)\(entry.value.signature)}'")
                }
                try check(entry.key, depth: depth + 2)
                try check(entry.value, depth: depth + 2)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgs("empty structure") }
            for f in fields { try check(f, depth: depth + 1) }
        case .variant(let inner):
            try check(inner, depth: depth + 1)
        }
    }

    // MARK: Writing

    /// Appends checked values (see `check`) to a message.
    static func append(_ values: [DBusValue], to message: OpaquePointer) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for v in values { append(v, &iter) }
    }

    private static func appendString(_ s: String, _ type: Int32, _ iter: inout DBusMessageIter) {
        s.withCString { cs in
            var p: UnsafePointer<CChar>? = cs
            _ = dbus_message_iter_append_basic(&iter, type, &p)
        }
    }

    private static func append(_ v: DBusValue, _ iter: inout DBusMessageIter) {
        switch v {
        case .byte(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BYTE, &x)
        case .bool(let b):
            var x: dbus_bool_t = b ? 1 : 0
            _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BOOLEAN, &x)
        case .int16(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT16, &x)
        case .uint16(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT16, &x)
        case .int32(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &x)
        case .uint32(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &x)
        case .int64(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT64, &x)
        case .uint64(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &x)
        case .double(var x): _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_DOUBLE, &x)
        case .string(let s): appendString(s, CDBUS_TYPE_STRING, &iter)
        case .objectPath(let s): appendString(s, CDBUS_TYPE_OBJECT_PATH, &iter)
        case .signature(let s): appendString(s, CDBUS_TYPE_SIGNATURE, &iter)
        case .array(let element, let items):
            var sub = DBusMessageIter()
            _ = dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, element, &sub)
            if element == "y" {
                let bytes: [UInt8] = items.map { if case .byte(let b) = $0 { return b } else { return 0 } }
                bytes.withUnsafeBufferPointer { buf in
                    var p: UnsafePointer<UInt8>? = buf.baseAddress
                    _ = dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &p, Int32(buf.count))
                }
            } else {
                for item in items { append(item, &sub) }
            }
            _ = dbus_message_iter_close_container(&iter, &sub)
        case .dictionary(let key, let value, let entries):
            var sub = DBusMessageIter()
            _ = dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "{" + key + value + "}", &sub)
            for entry in entries {
                var e = DBusMessageIter()
                _ = dbus_message_iter_open_container(&sub, CDBUS_TYPE_DICT_ENTRY, nil, &e)
                append(entry.key, &e)
                append(entry.value, &e)
                _ = dbus_message_iter_close_container(&sub, &e)
            }
            _ = dbus_message_iter_close_container(&iter, &sub)
        case .structure(let fields):
            var sub = DBusMessageIter()
            _ = dbus_message_iter_open_container(&iter, CDBUS_TYPE_STRUCT, nil, &sub)
            for f in fields { append(f, &sub) }
            _ = dbus_message_iter_close_container(&iter, &sub)
        case .variant(let inner):
            var sub = DBusMessageIter()
            _ = dbus_message_iter_open_container(&iter, CDBUS_TYPE_VARIANT, inner.signature, &sub)
            append(inner, &sub)
            _ = dbus_message_iter_close_container(&iter, &sub)
        }
    }

    // MARK: Reading

    /// Decodes a message body. Throws `InvalidArgs` for what the enum cannot hold (unix fds)
    /// or for a body too big to decode.
    static func read(_ message: OpaquePointer) throws -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var budget = maxDecodedValues
        var out: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID {
            out.append(try read(&iter, &budget, depth: 0))
            dbus_message_iter_next(&iter)
        }
        return out
    }

    private static func signatureOf(_ iter: inout DBusMessageIter) -> String {
        guard let p = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    private static func readString(_ iter: inout DBusMessageIter) -> String {
        var v = DBusBasicValue()
        dbus_message_iter_get_basic(&iter, &v)
        guard let p = v.str else { return "" }
        return String(cString: p)
    }

    private static func read(_ iter: inout DBusMessageIter, _ budget: inout Int, depth: Int) throws -> DBusValue {
        budget -= 1
        guard budget >= 0 else { throw DBusError.invalidArgs("message holds more than \(maxDecodedValues) values") }
        guard depth < maxDepth else { throw DBusError.invalidArgs("message nested more than \(maxDepth) levels deep") }
        let type = dbus_message_iter_get_arg_type(&iter)
        var v = DBusBasicValue()
        switch type {
        case CDBUS_TYPE_BYTE: dbus_message_iter_get_basic(&iter, &v); return .byte(v.byt)
        case CDBUS_TYPE_BOOLEAN: dbus_message_iter_get_basic(&iter, &v); return .bool(v.bool_val != 0)
        case CDBUS_TYPE_INT16: dbus_message_iter_get_basic(&iter, &v); return .int16(v.i16)
        case CDBUS_TYPE_UINT16: dbus_message_iter_get_basic(&iter, &v); return .uint16(v.u16)
        case CDBUS_TYPE_INT32: dbus_message_iter_get_basic(&iter, &v); return .int32(v.i32)
        case CDBUS_TYPE_UINT32: dbus_message_iter_get_basic(&iter, &v); return .uint32(v.u32)
        case CDBUS_TYPE_INT64: dbus_message_iter_get_basic(&iter, &v); return .int64(Int64(v.i64))
        case CDBUS_TYPE_UINT64: dbus_message_iter_get_basic(&iter, &v); return .uint64(UInt64(v.u64))
        case CDBUS_TYPE_DOUBLE: dbus_message_iter_get_basic(&iter, &v); return .double(v.dbl)
        case CDBUS_TYPE_STRING: return .string(readString(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(readString(&iter))
        case CDBUS_TYPE_SIGNATURE: return .signature(readString(&iter))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub, &budget, depth: depth + 1))
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                fields.append(try read(&sub, &budget, depth: depth + 1))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case CDBUS_TYPE_ARRAY:
            let element = String(signatureOf(&iter).dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element.hasPrefix("{") {
                let inner = element.dropFirst().dropLast()  // "kv"
                let key = String(inner.prefix(1))
                let value = String(inner.dropFirst())
                var entries: [DBusDictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                    var e = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &e)
                    let k = try read(&e, &budget, depth: depth + 2)
                    dbus_message_iter_next(&e)
                    let val = try read(&e, &budget, depth: depth + 2)
                    entries.append(DBusDictEntry(key: k, value: val))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            if element == "y" {
                var p: UnsafeMutableRawPointer? = nil
                var n: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &p, &n)
                let count = Int(max(n, 0))
                budget -= count / 4  // bytes are cheap next to other values
                guard budget >= 0 else { throw DBusError.invalidArgs("message holds more than \(maxDecodedValues) values") }
                guard let base = p, count > 0 else { return .array(element: "y", []) }
                let buf = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count)
                return .array(element: "y", buf.map { .byte($0) })
            }
            var items: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                items.append(try read(&sub, &budget, depth: depth + 1))
                dbus_message_iter_next(&sub)
            }
            return .array(element: element, items)
        case CDBUS_TYPE_UNIX_FD:
            throw DBusError.invalidArgs("unix file descriptors ('h') are not supported")
        default:
            throw DBusError.invalidArgs("unsupported D-Bus type code \(type)")
        }
    }
}

extension Array where Element == String {
    /// The strings one after another. Not `joined()`: its generic path looked up `StringProtocol`'s associated types
    /// at run time, about half a millisecond on the first call a start sends (RequestName).
    var concatenated: String { reduce(into: "") { $0 += $1 } }
}

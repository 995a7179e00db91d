import Foundation

/// A file system path as the kernel sees it: bytes, which need not be UTF-8. A name that is not UTF-8 (`caf\xE9.mp3`,
/// from an old rip) has no `String` and no Foundation `URL.path` (that of `file:///caf%E9.mp3` is empty): the library,
/// the file source and the lyrics finder name files by this.
public struct RawPath: Hashable, Sendable, Comparable {
    /// The path's bytes, without a terminating NUL.
    public var bytes: [UInt8]

    /// A path of these bytes (a trailing slash dropped).
    public init(bytes: [UInt8]) {
        // No trailing slash (except the root), so that prefixes compare by whole components.
        var b = bytes
        while b.count > 1 && b.last == UInt8(ascii: "/") { b.removeLast() }
        self.bytes = b
    }

    /// A path given as text.
    public init(_ string: String) { self.init(bytes: Array(string.utf8)) }

    /// The bytes of a C string as C gives them (`getcwd`, an environment variable, `argv`), without the NUL.
    public static func bytes(ofCString cString: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self), count: strlen(cString)))
    }

    /// The path of a file URL, decoding percent escapes to bytes (so non-UTF-8 names survive); nil for another URL or
    /// one whose path holds a NUL byte (no file is named so; cut there, it would name another).
    public init?(fileURL url: URL) {
        guard url.isFileURL else { return nil }
        let text = url.absoluteString
        // The scheme in any case; file://localhost/path, file:///path and file:/path.
        guard let colon = text.firstIndex(of: ":") else { return nil }
        var rest = text[text.index(after: colon)...]
        if rest.hasPrefix("//") {
            guard let slash = rest.dropFirst(2).firstIndex(of: "/") else { return nil }
            rest = rest[slash...]
        }
        guard rest.hasPrefix("/") else { return nil }
        if let q = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<q] }
        let utf8 = Array(rest.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count,
               let hi = Self.hexValue(utf8[i + 1]), let lo = Self.hexValue(utf8[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(utf8[i])
                i += 1
            }
        }
        guard !out.contains(0) else { return nil }
        self.init(bytes: Self.normalized(out))
    }

    public static func < (a: RawPath, b: RawPath) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// For people: invalid UTF-8 shows as U+FFFD.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether the bytes are UTF-8 (the path has a `String` of its own).
    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// file:// URI, every byte outside the unreserved set (and `/`) percent-encoded.
    public var uri: String {
        // Written straight into the string's storage, sized exactly (a scan keeps one for each file it sees).
        let prefix: StaticString = "file://"
        var length = prefix.utf8CodeUnitCount
        for b in bytes { length += Self.isUnreserved(b) ? 1 : 3 }
        return String(unsafeUninitializedCapacity: length) { out in
            var n = 0
            for i in 0..<prefix.utf8CodeUnitCount {
                out[n] = prefix.utf8Start[i]
                n += 1
            }
            for b in bytes {
                if Self.isUnreserved(b) {
                    out[n] = b
                    n += 1
                } else {
                    out[n] = UInt8(ascii: "%")
                    out[n + 1] = Self.hexDigits[Int(b >> 4)]
                    out[n + 2] = Self.hexDigits[Int(b & 0xF)]
                    n += 3
                }
            }
            return n
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    private static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// `name` inside this folder.
    public func appending(_ name: [UInt8]) -> RawPath {
        var b = bytes
        if b.last != UInt8(ascii: "/") { b.append(UInt8(ascii: "/")) }
        b += name
        return RawPath(bytes: b)
    }

    /// The last component's bytes.
    public var lastComponent: [UInt8] {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes }
        return Array(bytes[(slash + 1)...])
    }

    /// The folder holding the last component.
    public var parent: RawPath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return self }
        return RawPath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash]))
    }

    /// Whether `self` is `other` or inside it.
    public func isWithin(_ other: RawPath) -> Bool {
        if bytes == other.bytes { return true }
        if other.bytes == [UInt8(ascii: "/")] { return bytes.first == UInt8(ascii: "/") }
        return bytes.count > other.bytes.count && bytes.starts(with: other.bytes) && bytes[other.bytes.count] == UInt8(ascii: "/")
    }

    /// The extension of the last component, lowercased ASCII ("" when none).
    public var lowercasedExtension: String {
        let name = lastComponent
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return "" }
        return String(decoding: name[(dot + 1)...], as: UTF8.self).lowercased()
    }

    /// The file name without its extension, for a title.
    public var stem: String { String(decoding: baseName, as: UTF8.self) }

    /// The last component's bytes without its extension (a leading dot starts none).
    public var baseName: [UInt8] {
        let name = lastComponent
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return name }
        return Array(name[..<dot])
    }

    /// Calls `body` with a NUL-terminated C string of the path.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var zero = bytes
        zero.append(0)
        return try zero.withUnsafeBufferPointer { buffer in
            try buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { try body($0) }
        }
    }

    /// Removes `.` components, repeated slashes and a trailing slash (not `..`: symlinks make it ambiguous).
    public static func normalized(_ bytes: [UInt8]) -> [UInt8] {
        let absolute = bytes.first == UInt8(ascii: "/")
        let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).filter { !($0.count == 1 && $0.first == UInt8(ascii: ".")) }
        var out: [UInt8] = absolute ? [UInt8(ascii: "/")] : []
        for (i, part) in parts.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "/")) }
            out += part
        }
        return out.isEmpty ? [UInt8(ascii: ".")] : out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension RawPath {
    /// `path` made absolute against `base`, with `.`, `..` and repeated slashes removed lexically (symbolic links are
    /// left as they are), byte by byte: neither need be UTF-8.
    public static func absolute(_ path: [UInt8], relativeTo base: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        let joined = path.first == slash ? path : base + [slash] + path
        var components: [ArraySlice<UInt8>] = []
        for component in joined.split(separator: slash, omittingEmptySubsequences: true) {
            switch component.count {
            case 1 where component.first == UInt8(ascii: "."): continue
            case 2 where component.allSatisfy({ $0 == UInt8(ascii: ".") }): if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        return [slash] + Array(components.joined(separator: [slash]))
    }

    /// The working directory's path as getcwd gives it ("/" when it cannot).
    public static var currentDirectory: [UInt8] {
        guard let pointer = getcwd(nil, 0) else { return [UInt8(ascii: "/")] }
        defer { free(pointer) }
        return bytes(ofCString: pointer)
    }

    /// The bytes this process was given for `argument`: Swift's `CommandLine.arguments` puts U+FFFD in place of bytes
    /// that are not UTF-8 (a Latin-1 file name a shell completed), C's `argv` keeps them. The argument's UTF-8 when no
    /// such entry of `argv` reads as it.
    public static func commandLineBytes(of argument: String) -> [UInt8] {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return Array(argument.utf8) }
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = RawPath.bytes(ofCString: pointer)
            if String(validating: bytes, as: UTF8.self) == nil, String(decoding: bytes, as: UTF8.self) == argument { return bytes }
        }
        return Array(argument.utf8)
    }
}

extension RawPath {
    /// The first `count` bytes of the file (fewer where it ends); nil when it cannot be opened or read. A FIFO named
    /// so neither blocks the open nor waits for a writer.
    public func contents(upTo count: Int) -> [UInt8]? {
        let fd = withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(count, 65_536))
        while result.count < count {
            let wanted = min(chunk.count, count - result.count)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            result += chunk[..<n]
        }
        return result
    }
}

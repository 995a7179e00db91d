import Glibc
import RawPaths

/// Turns `play` arguments (paths or URIs) into the URIs the daemon takes.
enum MediaLocation {
    /// The URI for one command-line argument: an existing local path becomes an
    /// absolute, percent-encoded `file://` URI; anything else that looks like a URI
    /// (`scheme:…`) is passed on as it is; any other argument is a bad argument.
    static func uri(for argument: String, workingDirectory: [UInt8]) throws -> String {
        if argument.isEmpty {
            throw CLIFailure.badArgument("an empty argument is neither a file nor a URI")
        }
        // The bytes the shell gave: a name that is not UTF-8 (Latin-1, from an old rip) has none of its own in Swift.
        let path = RawPath(bytes: RawPath.absolute(RawPath.commandLineBytes(of: argument), relativeTo: workingDirectory))
        if path.withCString({ exists($0) }) {
            guard path.withCString({ access($0, R_OK) }) == 0 else {
                throw CLIFailure.badArgument("cannot read \(argument): \(String(cString: strerror(errno)))")
            }
            return fileURI(forAbsolutePath: path.bytes)
        }
        if looksLikeURI(argument) {
            return argument
        }
        throw CLIFailure.badArgument("no such file: \(argument)")
    }

    /// The URIs for all `arguments`; every bad one is reported, then the first is thrown.
    static func uris(for arguments: [String]) throws -> [String] {
        let cwd = workingDirectoryBytes()
        var uris: [String] = []
        var failures: [CLIFailure] = []
        for argument in arguments {
            do {
                uris.append(try uri(for: argument, workingDirectory: cwd))
            } catch let failure as CLIFailure {
                failures.append(failure)
            }
        }
        if let last = failures.last {
            for failure in failures.dropLast() {
                Output.error("error: \(failure.message)")
            }
            throw last
        }
        return uris
    }

    /// `scheme:rest`, with a scheme of two or more characters (RFC 3986 letters).
    static func looksLikeURI(_ string: String) -> Bool {
        guard let colon = string.firstIndex(of: ":") else { return false }
        let scheme = string[..<colon]
        guard scheme.count >= 2, let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// `path` made absolute against `base`, with `.`, `..` and repeated slashes
    /// removed lexically (symbolic links are left as they are).
    static func absolutePath(_ path: String, relativeTo base: String) -> String {
        String(decoding: RawPath.absolute(Array(path.utf8), relativeTo: Array(base.utf8)), as: UTF8.self)
    }

    /// `file://` + the path, percent-encoded byte by byte (UTF-8), keeping what
    /// RFC 3986 allows unencoded in a path (as GLib's g_filename_to_uri does).
    static func fileURI(forAbsolutePath path: String) -> String {
        fileURI(forAbsolutePath: Array(path.utf8))
    }

    /// `fileURI` of a path's bytes (which need not be UTF-8).
    static func fileURI(forAbsolutePath path: [UInt8]) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = Array("file://".utf8)
        for byte in path {
            if allowed.contains(byte) {
                encoded.append(byte)
            } else {
                encoded.append(UInt8(ascii: "%"))
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (invalid UTF-8 is repaired).
    static func percentDecoded(_ string: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(string.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "%"), input.count >= 2,
               let high = hexValue(input[input.startIndex]), let low = hexValue(input[input.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The working directory as the shell names it ($PWD when it is the same
    /// directory as getcwd's, so symlinked folders keep their names).
    static func workingDirectory() -> String {
        String(decoding: workingDirectoryBytes(), as: UTF8.self)
    }

    /// `workingDirectory` as its bytes (a folder's name need not be UTF-8).
    static func workingDirectoryBytes() -> [UInt8] {
        let physical = RawPath.currentDirectory
        if let variable = getenv("PWD") as UnsafeMutablePointer<CChar>?, case let pwd = RawPath.bytes(ofCString: variable),
           pwd.first == UInt8(ascii: "/"), sameFile(RawPath(bytes: pwd), RawPath(bytes: physical))
        {
            return pwd
        }
        return physical
    }

    private static func exists(_ path: UnsafePointer<CChar>) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func sameFile(_ a: RawPath, _ b: RawPath) -> Bool {
        var first = stat()
        var second = stat()
        guard a.withCString({ stat($0, &first) }) == 0, b.withCString({ stat($0, &second) }) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}

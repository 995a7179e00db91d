import Foundation
import Glibc

/// Moving and copying without ever overwriting or half-writing: a new name is taken only if free (link, which
/// fails on an existing name), and data crosses file systems as copy + fsync + link + remove.
enum FileTransfer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ what: String, _ path: String, _ code: Int32 = errno) {
            description = "\(what) \(path): \(String(cString: strerror(code)))"
        }
    }

    /// A name for `name` in `folder` that no file has yet: "name.ext", "name (2).ext", "name (3).ext", ….
    static func candidates(_ name: String, in folder: String) -> some Sequence<String> {
        let ns = name as NSString
        let ext = ns.pathExtension
        let stem = ext.isEmpty ? name : ns.deletingPathExtension
        return (1...).lazy.map { n in
            let numbered = n == 1 ? stem : "\(stem) (\(n))"
            return folder + "/" + (ext.isEmpty ? numbered : numbered + "." + ext)
        }
    }

    /// Puts the file at `source` into `folder` under a free version of `name`, moving (or copying) it; returns the
    /// new path. Never replaces a file; on failure nothing is left in `folder` and `source` is untouched.
    static func transfer(_ source: String, into folder: String, name: String, move: Bool) throws(Failure) -> String {
        try makeFolder(folder)
        if move {
            for destination in candidates(name, in: folder).prefix(10_000) {
                // link + unlink is a rename that cannot replace anything.
                if link(source, destination) == 0 {
                    unlink(source)
                    syncFolder(folder)
                    return destination
                }
                if errno == EEXIST { continue }
                if errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP { break }
                throw Failure("cannot move into", folder)
            }
        }
        let temp = folder + "/.tonearm-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).part"
        try copy(source, to: temp)
        for destination in candidates(name, in: folder).prefix(10_000) {
            if link(temp, destination) == 0 {
                unlink(temp)
                syncFolder(folder)
                if move { unlink(source) }
                return destination
            }
            if errno == EEXIST { continue }
            let code = errno
            unlink(temp)
            throw Failure("cannot name the copy in", folder, code)
        }
        unlink(temp)
        throw Failure("no free name in", folder, EEXIST)
    }

    /// Writes `text` to a new file in `folder` named after `name` (never replacing one); returns its path.
    static func writeNote(_ text: String, into folder: String, name: String) throws(Failure) -> String {
        try makeFolder(folder)
        for destination in candidates(name, in: folder).prefix(10_000) {
            let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw Failure("cannot write", destination)
            }
            defer { close(fd) }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            fsync(fd)
            return destination
        }
        throw Failure("no free name in", folder, EEXIST)
    }

    /// Copies a file's bytes to a new file at `destination` and flushes them to disk.
    static func copy(_ source: String, to destination: String) throws(Failure) {
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard input >= 0 else { throw Failure("cannot read", source) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw Failure("cannot create", destination) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let code = errno
                close(output)
                unlink(destination)
                throw Failure("cannot read", source, code)
            }
            if n == 0 { break }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { write(output, $0.baseAddress! + done, n - done) }
                if w < 0 && errno == EINTR { continue }
                if w <= 0 {
                    let code = errno
                    close(output)
                    unlink(destination)
                    throw Failure("cannot write", destination, code)
                }
                done += w
            }
        }
        guard fsync(output) == 0 else {
            let code = errno
            close(output)
            unlink(destination)
            throw Failure("cannot flush", destination, code)
        }
        close(output)
    }

    /// Whether two files hold the same bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC)
        defer {
            if fa >= 0 { close(fa) }
            if fb >= 0 { close(fb) }
        }
        guard fa >= 0, fb >= 0 else { return false }
        var x = [UInt8](repeating: 0, count: 1 << 16)
        var y = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = x.withUnsafeMutableBytes { read(fa, $0.baseAddress!, $0.count) }
            let m = y.withUnsafeMutableBytes { read(fb, $0.baseAddress!, n > 0 ? n : 1) }
            if n < 0 || m < 0 || n != m { return false }
            if n == 0 { return true }
            if x[0..<n] != y[0..<m] { return false }
        }
    }

    static func makeFolder(_ folder: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw Failure("cannot create the folder", folder, EACCES)
        }
    }

    static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}

import Foundation

/// Writes `bytes` to a file in `folder` (made if missing) whose name is raw bytes, not necessarily UTF-8 (a Latin-1
/// `é`): no Swift String, and so no Foundation call, can name such a file. Returns the path's bytes.
@discardableResult
public func writeRaw(_ bytes: [UInt8], folder: URL, name: [UInt8]) throws -> [UInt8] {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = Array(folder.path.utf8) + [UInt8(ascii: "/")] + name
    let fd = (path + [0]).withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    }
    guard fd >= 0 else { throw POSIXError(.EACCES) }
    defer { close(fd) }
    _ = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress!, $0.count) }
    return path
}

import Foundation
import RawPaths

/// Sizes that RIFF (WAV) and IFF (AIFF) headers promise, checked against the file: a transfer that broke off
/// leaves a header announcing more than is there, which GStreamer quietly plays as a shorter file.
public enum Truncation {
    /// Why the file is truncated, or nil when its header and size agree (or it is neither WAV nor AIFF).
    public static func reason(_ path: String) -> String? {
        reason(RawPath(path))
    }

    /// `reason` for a path given as its bytes (a name need not be UTF-8).
    public static func reason(_ path: RawPath) -> String? {
        var info = stat()
        guard path.withCString({ lstat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int64(info.st_size)
        guard let head = path.contents(upTo: 65_536) else { return nil }
        guard head.count >= 12 else { return nil }
        let tag = String(decoding: head[0..<4], as: UTF8.self)
        let form = String(decoding: head[8..<12], as: UTF8.self)
        let littleEndian: Bool
        switch (tag, form) {
        case ("RIFF", "WAVE"): littleEndian = true
        case ("FORM", "AIFF"), ("FORM", "AIFC"): littleEndian = false
        default: return nil
        }
        func u32(_ at: Int) -> Int64 {
            let b = head[at..<at + 4].map(Int64.init)
            return littleEndian ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
        }
        // Streaming writers put 0 or 0xFFFFFFFF where the length is unknown.
        let unknown: Set<Int64> = [0, 0xFFFF_FFFF]
        let whole = u32(4)
        if !unknown.contains(whole), whole + 8 > size {
            return "truncated: its \(tag) header announces \(whole + 8) bytes but the file has \(size)"
        }
        var offset = 12
        while offset + 8 <= head.count {
            let id = String(decoding: head[offset..<offset + 4], as: UTF8.self)
            let length = u32(offset + 4)
            if id == "data" || id == "SSND" {
                if !unknown.contains(length), Int64(offset) + 8 + length > size {
                    return "truncated: its '\(id)' chunk announces \(length) bytes of audio but the file ends \(Int64(offset) + 8 + length - size) bytes short"
                }
                return nil
            }
            offset += 8 + Int(length) + Int(length & 1)
        }
        return nil
    }
}

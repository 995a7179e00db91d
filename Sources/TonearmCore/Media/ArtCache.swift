import Foundation

/// Cover art extracted to `$XDG_CACHE_HOME/tonearm/art/`, one file per distinct image, named by its content.
public struct ArtCache: Sendable {
    public let folder: URL

    public init(folder: URL) { self.folder = folder }

    /// Stores image bytes (once) and returns the file's URL.
    public func store(_ bytes: [UInt8]) throws -> URL {
        let url = folder.appendingPathComponent(Self.fileName(for: bytes))
        if !FileManager.default.fileExists(atPath: url.path) {
            try AtomicFile.write(Data(bytes), to: url)
        }
        return url
    }

    static func fileName(for bytes: [UInt8]) -> String {
        // Two FNV-1a variants make a 128-bit name; collisions between covers are not a practical concern.
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x6c62_272e_07bb_0142
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b &* 0x0000_0100_0000_01b3) ^ UInt64(byte)
        }
        let hex = String(format: "%016llx%016llx", a, b)
        return hex + "." + imageExtension(bytes)
    }

    static func imageExtension(_ b: [UInt8]) -> String {
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "png" }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if b.starts(with: Array("GIF8".utf8)) { return "gif" }
        if b.count > 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) { return "webp" }
        if b.starts(with: Array("BM".utf8)) { return "bmp" }
        return "img"
    }
}

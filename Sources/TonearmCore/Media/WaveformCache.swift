import Foundation
import RawPaths
import Waveform

/// Fine waveform peaks on disk, one file per content key, in `folder` (`$XDG_CACHE_HOME/tonearm/waveforms`). An
/// entry is "TNWF", a format number, the frame count (UInt64 LE), then the peaks as an audiowaveform `.dat` v2 (which
/// does not record the frame count). Anything unreadable counts as absent and is overwritten.
public struct WaveformCache: Sendable {
    public let folder: URL
    static let magic: [UInt8] = Array("TNWF".utf8) + [1, 0, 0, 0]

    /// A cache in `folder` (created on the first store).
    public init(folder: URL) { self.folder = folder }

    /// A key for the file's content without reading it all: FNV-1a over its size, its first and last 64 KiB and 16
    /// windows of 4 KiB spread between them. A retagged, re-encoded or edited file changes it; a copy or a moved
    /// file keeps it. Nil when the file cannot be read.
    public static func contentKey(path: String) -> String? {
        contentKey(path: RawPath(path))
    }

    /// `contentKey` of a path given as its bytes (a name need not be UTF-8).
    public static func contentKey(path: RawPath) -> String? {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = UInt64(info.st_size)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func mix<S: Sequence<UInt8>>(_ bytes: S) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        mix(Array("tonearm-waveform-1".utf8))
        withUnsafeBytes(of: size.littleEndian) { mix($0) }
        var windows: [(UInt64, Int)] = [(0, 65_536)]
        for i in 1...16 { windows.append((size * UInt64(i) / 17, 4096)) }
        windows.append((size > 65_536 ? size - 65_536 : 0, 65_536))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for (offset, length) in windows {
            // As much of the window as the file holds (the reads the key was defined by stop at its end too).
            var got = 0
            while got < length {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, length - got, off_t(offset) + off_t(got)) }
                if n < 0, errno == EINTR { continue }
                guard n >= 0 else { return nil }
                if n == 0 { break }
                got += n
            }
            mix(buffer[..<got])
        }
        return String(hash, radix: 16)
    }

    func entry(_ key: String) -> URL { folder.appendingPathComponent(key + ".peaks") }

    /// The stored peaks for `key`, if a readable entry holds them.
    public func load(_ key: String) -> WaveformPeaks? {
        guard let data = FileManager.default.contents(atPath: entry(key).path) else { return nil }
        let bytes = [UInt8](data)
        guard bytes.count >= 16, Array(bytes[0..<8]) == Self.magic else { return nil }
        var frames: UInt64 = 0
        for i in 0..<8 { frames |= UInt64(bytes[8 + i]) << (8 * UInt64(i)) }
        guard var peaks = try? AudiowaveformFormat.readDat(Array(bytes[16...])),
              frames <= UInt64(peaks.count) * UInt64(peaks.samplesPerPixel) else { return nil }
        peaks.frames = Int(frames)
        return peaks
    }

    /// Stores `peaks` under `key`, atomically (a temporary file renamed over the entry).
    public func store(_ peaks: WaveformPeaks, key: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var bytes = Self.magic
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: UInt64(peaks.frames) >> (8 * UInt64(i)))) }
        bytes += AudiowaveformFormat.dat(peaks)
        try Data(bytes).write(to: entry(key), options: .atomic)
    }
}

/// BBC audiowaveform's data formats (version 2, one channel, 16-bit), so waveform viewers such as peaks.js read what
/// Tonearm writes: `.dat` (binary, little-endian) and `.json`.
public enum AudiowaveformFormat {
    /// Why a `.dat` could not be read.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The `.dat` bytes: a 24-byte header (version 2, flags 0 = 16-bit, sample rate, samples per pixel, length,
    /// channels 1), then a min and a max Int16 per pixel.
    public static func dat(_ peaks: WaveformPeaks) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(24 + 4 * peaks.count)
        func u32(_ v: UInt32) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        func i16(_ v: Int16) { let b = UInt16(bitPattern: v); out += [UInt8(b & 0xFF), UInt8(b >> 8)] }
        u32(2)
        u32(0)
        u32(UInt32(clamping: peaks.sampleRate))
        u32(UInt32(clamping: peaks.samplesPerPixel))
        u32(UInt32(clamping: peaks.count))
        u32(1)
        for i in 0..<peaks.count {
            i16(peaks.minima[i])
            i16(peaks.maxima[i])
        }
        return out
    }

    /// Reads a `.dat` of version 1 or 2, 8- or 16-bit, any number of channels (folded into one; 8-bit values scaled
    /// to 16). The format does not record the length in frames: `frames` is pixels × samples per pixel.
    public static func readDat(_ bytes: [UInt8]) throws(ReadError) -> WaveformPeaks {
        func u32(_ o: Int) -> UInt32 {
            UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
        }
        guard bytes.count >= 20 else { throw ReadError(description: "too short for a waveform header (\(bytes.count) bytes)") }
        let version = u32(0)
        guard version == 1 || version == 2 else { throw ReadError(description: "unknown waveform data version \(version)") }
        let headerSize = version == 2 ? 24 : 20
        guard bytes.count >= headerSize else { throw ReadError(description: "too short for a version \(version) header") }
        let eightBit = u32(4) & 1 == 1
        let sampleRate = Int(u32(8)), spp = Int(u32(12)), length = Int(u32(16))
        let channels = version == 2 ? Int(Int32(bitPattern: u32(20))) : 1
        guard channels >= 1, channels <= 64 else { throw ReadError(description: "bad channel count \(channels)") }
        let width = eightBit ? 1 : 2
        let needed = headerSize + length * channels * 2 * width
        guard bytes.count >= needed else {
            throw ReadError(description: "the header promises \(length) pixels; the data holds \((bytes.count - headerSize) / (channels * 2 * width))")
        }
        func value(_ index: Int) -> Int16 {
            let o = headerSize + index * width
            if eightBit { return Int16(Int8(bitPattern: bytes[o])) * 256 }
            return Int16(bitPattern: UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8)
        }
        var lows = [Int16](repeating: .max, count: length), highs = [Int16](repeating: .min, count: length)
        for pixel in 0..<length {
            for channel in 0..<channels {
                let base = (pixel * channels + channel) * 2
                lows[pixel] = min(lows[pixel], value(base))
                highs[pixel] = max(highs[pixel], value(base + 1))
            }
        }
        return WaveformPeaks(sampleRate: sampleRate, samplesPerPixel: spp, frames: length * spp, minima: lows, maxima: highs)
    }

    /// The `.json` text: version 2, channels 1, sample_rate, samples_per_pixel, bits 16, length, and data as min, max
    /// pairs.
    public static func json(_ peaks: WaveformPeaks) -> String {
        var data = ""
        data.reserveCapacity(peaks.count * 12)
        for i in 0..<peaks.count {
            if i > 0 { data += "," }
            data += "\(peaks.minima[i]),\(peaks.maxima[i])"
        }
        return "{\"version\":2,\"channels\":1,\"sample_rate\":\(peaks.sampleRate),\"samples_per_pixel\":\(peaks.samplesPerPixel),"
            + "\"bits\":16,\"length\":\(peaks.count),\"data\":[\(data)]}\n"
    }
}

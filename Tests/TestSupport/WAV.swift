import Foundation

/// 16-bit PCM WAV files: written for test media, read back to check rendered audio.
public struct WAV: Equatable {
    public var sampleRate: Int
    public var channels: Int
    /// Interleaved samples.
    public var samples: [Int16]

    public init(sampleRate: Int, channels: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// Headerless little-endian 16-bit samples, as `filesink` writes raw audio.
    public init(raw: Data, sampleRate: Int, channels: Int) {
        var samples = [Int16](repeating: 0, count: raw.count / 2)
        samples.withUnsafeMutableBytes { out in raw.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<out.count])) } }
        self.init(sampleRate: sampleRate, channels: channels, samples: samples)
    }

    public var frameCount: Int { samples.count / max(1, channels) }
    public var seconds: Double { Double(frameCount) / Double(sampleRate) }

    /// The first channel's samples (of whole frames).
    public var mono: [Int16] { stride(from: 0, to: frameCount * max(1, channels), by: max(1, channels)).map { samples[$0] } }

    /// The frames in `range`, e.g. to cut one signal into pieces that join exactly.
    public func frames(_ range: Range<Int>) -> WAV {
        let width = max(1, channels)
        return WAV(sampleRate: sampleRate, channels: channels, samples: Array(samples[(range.lowerBound * width)..<(range.upperBound * width)]))
    }

    /// A sine of `frequency` Hz starting at frame `startFrame` (so consecutive pieces join seamlessly),
    /// peaking at `amplitude` of full scale; samples are truncated toward zero.
    public static func sine(frequency: Double = 440, seconds: Double, startFrame: Int = 0, sampleRate: Int = 44100,
                            amplitude: Double = 0.5, channels: Int = 2) -> WAV {
        let frames = Int((seconds * Double(sampleRate)).rounded())
        return sine(frequency: frequency, frames: startFrame..<(startFrame + frames), sampleRate: sampleRate,
                    peak: amplitude * 32767, channels: channels, rounding: .towardZero)
    }

    /// Frames `frames` of one continuous sine of `frequency` Hz peaking at `peak` (in sample units), rounded to the
    /// nearest sample value: pieces taken from adjacent ranges join exactly.
    public static func sine(frequency: Double = 440, frames: Range<Int>, sampleRate: Int = 44100, peak: Double,
                            channels: Int = 2) -> WAV {
        sine(frequency: frequency, frames: frames, sampleRate: sampleRate, peak: peak, channels: channels,
             rounding: .toNearestOrAwayFromZero)
    }

    private static func sine(frequency: Double, frames: Range<Int>, sampleRate: Int, peak: Double, channels: Int,
                             rounding: FloatingPointRoundingRule) -> WAV {
        var samples: [Int16] = []
        samples.reserveCapacity(frames.count * channels)
        for i in frames {
            let t = Double(i) / Double(sampleRate)
            let v = Int16((peak * sin(2 * .pi * frequency * t)).rounded(rounding))
            for _ in 0..<channels { samples.append(v) }
        }
        return WAV(sampleRate: sampleRate, channels: channels, samples: samples)
    }

    /// An upper bound for the sample-to-sample step of such a sine: its steepest slope, rounded up, plus 2 for
    /// the rounding of both samples. A larger step (a click, a splice) is a discontinuity.
    public static func sineStepLimit(frequency: Double = 440, peak: Double, sampleRate: Int = 44100) -> Int {
        Int((peak * 2 * Double.pi * frequency / Double(sampleRate)).rounded(.up)) + 2
    }

    public func data() -> Data {
        var d = Data(capacity: 44 + samples.count * 2)
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        let bytes = UInt32(samples.count * 2)
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes)
        d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(UInt16(channels))
        u32(UInt32(sampleRate)); u32(UInt32(sampleRate * channels * 2)); u16(UInt16(channels * 2)); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(bytes)
        // Every Linux target Swift runs on is little-endian, as WAV is: the samples go in as they lie in memory.
        samples.withUnsafeBytes { d.append(contentsOf: $0) }
        return d
    }

    public func write(to url: URL) throws { try data().write(to: url) }

    /// Reads a 16-bit PCM WAV, walking its chunks (GStreamer's wavenc may add some).
    public static func read(_ url: URL) throws -> WAV {
        let d = [UInt8](try Data(contentsOf: url))
        func u32(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 | Int(d[o + 2]) << 16 | Int(d[o + 3]) << 24 }
        func u16(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 }
        guard d.count >= 12, d[0..<4].elementsEqual("RIFF".utf8), d[8..<12].elementsEqual("WAVE".utf8) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var offset = 12
        var rate = 0, channels = 0, bits = 0
        while offset + 8 <= d.count {
            let id = String(decoding: d[offset..<offset + 4], as: UTF8.self)
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                channels = u16(body + 2); rate = u32(body + 4); bits = u16(body + 14)
            } else if id == "data" {
                // A writer killed before finishing leaves the size unset; take what is there.
                if size == 0 || body + size > d.count { size = d.count - body }
                guard bits == 16 else { throw CocoaError(.fileReadCorruptFile) }
                var samples = [Int16](repeating: 0, count: size / 2)
                samples.withUnsafeMutableBytes { out in
                    d.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[body..<(body + out.count)])) }
                }
                return WAV(sampleRate: rate, channels: channels, samples: samples)
            }
            offset = body + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}

/// Checks on rendered audio.
public enum AudioCheck {
    /// The amplitude of the `frequency` component of a stretch of samples (Goertzel), exact for a whole number of
    /// periods.
    public static func amplitude(of frequency: Double, in samples: ArraySlice<Double>, sampleRate: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = x + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        return 2 * sqrt(max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)) / Double(samples.count)
    }

    /// The longest run of (near) silent frames, e.g. a gap between two tracks.
    public static func longestSilence(_ samples: some Collection<Int16>, threshold: Int16 = 64) -> Int {
        var longest = 0, run = 0
        for s in samples {
            if abs(Int(s)) <= Int(threshold) { run += 1; longest = max(longest, run) } else { run = 0 }
        }
        return longest
    }

    /// The biggest jump between neighbouring samples (a click or a discontinuity shows as a spike).
    public static func largestJump(_ samples: some Collection<Int16>) -> Int {
        zip(samples, samples.dropFirst()).map { abs(Int($1) - Int($0)) }.max() ?? 0
    }

    /// Frames at the start and end whose level is below threshold (lead-in and tail).
    public static func trimmedRange(_ samples: [Int16], threshold: Int16 = 64) -> Range<Int>? {
        guard let first = samples.firstIndex(where: { abs(Int($0)) > Int(threshold) }),
              let last = samples.lastIndex(where: { abs(Int($0)) > Int(threshold) }) else { return nil }
        return first..<(last + 1)
    }
}

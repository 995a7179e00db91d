/// A track's waveform: one min/max pair of 16-bit sample values per `samplesPerPixel` frames, all channels folded
/// into one (the lowest and highest value of any channel), so a sound panned hard to one side still shows.
public struct WaveformPeaks: Sendable, Equatable {
    /// The decoded audio's sample rate (Hz).
    public var sampleRate: Int
    /// Frames (samples of one channel) per min/max pair; after `resampled(width:)`, the nearest whole number.
    public var samplesPerPixel: Int
    /// Frames decoded in all: the track's true length in samples.
    public var frames: Int
    /// The lowest sample value of each pixel.
    public var minima: [Int16]
    /// The highest sample value of each pixel.
    public var maxima: [Int16]

    /// Peaks with these fields; `minima` and `maxima` must have the same count.
    public init(sampleRate: Int, samplesPerPixel: Int, frames: Int, minima: [Int16], maxima: [Int16]) {
        precondition(minima.count == maxima.count, "one minimum per maximum")
        self.sampleRate = sampleRate
        self.samplesPerPixel = max(1, samplesPerPixel)
        self.frames = frames
        self.minima = minima
        self.maxima = maxima
    }

    /// The number of min/max pairs.
    public var count: Int { minima.count }

    /// The length in seconds.
    public var seconds: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }

    /// The largest magnitude of each pixel, 0…1 of full scale (what a one-sided bar draws).
    public var amplitudes: [Double] {
        (0..<count).map { max(abs(Double(minima[$0])), abs(Double(maxima[$0]))) / 32768 }
    }

    /// The same waveform `width` pixels wide: pixel i covers frames [i·frames/width, (i+1)·frames/width) and takes the
    /// extremes of every pair that overlaps them, so no peak is lost at any width. A width above the pairs held
    /// repeats pairs (the data cannot get finer than it was measured). Width 0 or an empty waveform: unchanged.
    public func resampled(width: Int) -> WaveformPeaks {
        guard width > 0, count > 0, frames > 0 else { return self }
        var lows = [Int16](repeating: 0, count: width)
        var highs = [Int16](repeating: 0, count: width)
        let spp = samplesPerPixel
        for pixel in 0..<width {
            let start = pixel * frames / width
            let end = (pixel + 1) * frames / width
            let first = min(start / spp, count - 1)
            let last = min(max(end - 1, start) / spp, count - 1)
            var low = Int16.max, high = Int16.min
            for pair in first...last {
                low = min(low, minima[pair])
                high = max(high, maxima[pair])
            }
            lows[pixel] = low
            highs[pixel] = high
        }
        let perPixel = Int((Double(frames) / Double(width)).rounded())
        return WaveformPeaks(sampleRate: sampleRate, samplesPerPixel: max(1, perPixel), frames: frames, minima: lows, maxima: highs)
    }
}

/// Bins decoded audio into min/max pairs by counting frames (never by a reported duration, which a CBR MP3 without
/// a Xing header does not give before the end).
public struct PeakAccumulator: Sendable {
    /// Frames per pair.
    public let samplesPerPixel: Int
    private var minima: [Int16] = []
    private var maxima: [Int16] = []
    private var low = Int16.max
    private var high = Int16.min
    private var inPixel = 0
    /// Frames added so far.
    public private(set) var frames = 0

    /// An empty accumulator making one pair per `samplesPerPixel` frames.
    public init(samplesPerPixel: Int) {
        self.samplesPerPixel = max(1, samplesPerPixel)
    }

    /// Adds interleaved frames of `channels` channels (a trailing partial frame is ignored).
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>, channels: Int) {
        let channels = max(1, channels)
        let frameCount = samples.count / channels
        guard frameCount > 0 else { return }
        var index = 0
        var low = self.low, high = self.high, inPixel = self.inPixel
        let spp = samplesPerPixel
        for _ in 0..<frameCount {
            for _ in 0..<channels {
                let value = samples[index]
                if value < low { low = value }
                if value > high { high = value }
                index += 1
            }
            inPixel += 1
            if inPixel == spp {
                minima.append(low)
                maxima.append(high)
                low = .max
                high = .min
                inPixel = 0
            }
        }
        self.low = low
        self.high = high
        self.inPixel = inPixel
        frames += frameCount
    }

    /// `add` for an array (tests, small inputs).
    public mutating func add(_ samples: [Int16], channels: Int) {
        samples.withUnsafeBufferPointer { add($0, channels: channels) }
    }

    /// The peaks so far, with the last partial pixel as a pair of its own.
    public func peaks(sampleRate: Int) -> WaveformPeaks {
        var lows = minima, highs = maxima
        if inPixel > 0 {
            lows.append(low)
            highs.append(high)
        }
        return WaveformPeaks(sampleRate: sampleRate, samplesPerPixel: samplesPerPixel, frames: frames, minima: lows, maxima: highs)
    }
}

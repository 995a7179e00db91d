import Foundation

/// The gains of a 10-band graphic equalizer (GStreamer's `equalizer-10bands`) and its preamp, in dB.
public struct EqualizerCurve: Sendable, Equatable, Hashable, Codable {
    /// The centre frequency of each band, in Hz (fixed by `equalizer-10bands`).
    public static let frequencies: [Double] = [29, 59, 119, 237, 474, 947, 1889, 3770, 7523, 15011]
    /// What a band may be set to, in dB (the element's own range).
    public static let bandRange: ClosedRange<Double> = -24...12
    /// What the preamp may be set to, in dB.
    public static let preampRange: ClosedRange<Double> = -24...12
    /// No change at any frequency.
    public static let flat = EqualizerCurve()

    /// Ten gains in dB, lowest band first.
    public private(set) var bands: [Double]
    /// dB applied to everything (clamped to `preampRange` when a person sets it; clipping prevention may go lower).
    public var preamp: Double

    /// Gains outside the allowed ranges are clamped; missing bands are 0, extra ones dropped.
    public init(bands: [Double] = Array(repeating: 0, count: 10), preamp: Double = 0) {
        self.bands = (0..<10).map { $0 < bands.count ? Self.clamp(bands[$0], Self.bandRange) : 0 }
        self.preamp = Self.clamp(preamp, Self.preampRange)
    }

    private enum CodingKeys: String, CodingKey { case bands, preamp }

    /// Through the clamping initializer: a hand-edited state file cannot give other than ten bands in range.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let preamp = try c.decode(Double.self, forKey: .preamp)
        self.init(bands: try c.decode([Double].self, forKey: .bands),
                  preamp: preamp.isFinite ? min(Self.preampRange.upperBound, max(Self.preampRange.lowerBound, preamp)) : 0)
    }

    /// Sets band `index` (0…9) to `gain` dB, clamped.
    public mutating func setBand(_ index: Int, _ gain: Double) {
        guard bands.indices.contains(index) else { return }
        bands[index] = Self.clamp(gain, Self.bandRange)
    }

    /// Whether every band and the preamp are 0 dB.
    public var isFlat: Bool { self == .flat }

    /// The largest boost of any band, 0 when none boosts.
    public var largestBoost: Double { max(0, bands.max() ?? 0) }

    /// The curve with clipping prevention: the preamp lowered by the largest band boost, so a full-scale tone at
    /// any band's centre frequency stays at or below full scale (neighbouring boosts overlap a little; the float
    /// path keeps what exceeds until the final conversion).
    public var guardedAgainstClipping: EqualizerCurve {
        var copy = self
        copy.preamp = preamp - largestBoost
        return copy
    }

    /// The ten bands then the preamp: what a ramp moves.
    public var values: [Double] { bands + [preamp] }

    /// The index of the band nearest to `hertz` on a log scale.
    public static func band(nearest hertz: Double) -> Int {
        guard hertz > 0 else { return 0 }
        return frequencies.indices.min { abs(log2(frequencies[$0] / hertz)) < abs(log2(frequencies[$1] / hertz)) } ?? 0
    }

    /// A band as a person writes it: an index 0…9, or a frequency ("1k", "1kHz", "947", "60Hz", "15.0khz") matched
    /// to the nearest band within half an octave. Nil when it names none.
    public static func band(named text: String) -> Int? {
        var t = text.lowercased().trimmingCharacters(in: .whitespaces)
        if let index = Int(t), (0..<10).contains(index) { return index }
        if t.hasSuffix("hz") { t.removeLast(2) }
        var scale = 1.0
        if t.hasSuffix("k") {
            t.removeLast()
            scale = 1000
        }
        guard let number = Double(t), number.isFinite, number > 0 else { return nil }
        let hertz = number * scale
        let index = band(nearest: hertz)
        return abs(log2(frequencies[index] / hertz)) <= 0.5 ? index : nil
    }

    /// "29 Hz", "1.9 kHz": how a band's frequency is shown.
    public static func label(_ index: Int) -> String {
        let f = frequencies[index]
        if f < 1000 { return "\(Int(f)) Hz" }
        let k = f / 1000
        return k < 10 ? String(format: "%.1f kHz", k) : "\(Int(k.rounded())) kHz"
    }

    private static func clamp(_ v: Double, _ range: ClosedRange<Double>) -> Double {
        v.isFinite ? min(range.upperBound, max(range.lowerBound, v)) : 0
    }
}

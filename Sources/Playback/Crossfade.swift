import Foundation

/// How an item comes in when it follows another gaplessly: the two overlap for `seconds`, the old one fading out
/// while the new one fades in along `curve`.
public struct Crossfade: Sendable, Hashable, CustomStringConvertible {
    /// How long the two tracks overlap, in seconds (0 < seconds ≤ 15).
    public var seconds: Double
    public var curve: FadeCurve

    public init(seconds: Double, curve: FadeCurve = .equalPower) {
        self.seconds = seconds
        self.curve = curve
    }

    public var description: String { "\(seconds) s \(curve)" }
}

/// The shape of a fade: the gains of the track going out and of the one coming in at each point of it.
public enum FadeCurve: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// sin/cos: the sum of two uncorrelated tracks keeps its power (no dip in the middle).
    case equalPower = "equal-power"
    /// Straight lines: the amplitudes sum to 1 (a dip of 3 dB in the middle for uncorrelated music).
    case linear

    public var description: String { rawValue }

    /// The gains (out, in) at `progress` (0 at the start of the fade, 1 at its end).
    public func gains(at progress: Double) -> (out: Double, in: Double) {
        let p = min(1, max(0, progress))
        switch self {
        case .equalPower: return (cos(p * .pi / 2), sin(p * .pi / 2))
        case .linear: return (1 - p, p)
        }
    }
}

/// The one format audio is mixed in while crossfade is on: 32-bit float, interleaved, at a fixed rate and channel
/// count, so tracks of any rate, channel count and sample format fade into each other.
public enum CrossfadeFormat {
    public static let rate = 44_100
    public static let channels = 2
    /// Caps for the capsfilter ahead of the crossfader.
    static let caps = "audio/x-raw,format=F32LE,layout=interleaved,rate=\(rate),channels=\(channels)"
    /// The longest fade, in seconds.
    public static let maximumSeconds = 15.0
    /// How much trailing silence is skipped at most when a track ends quietly, in seconds.
    public static let maximumSilence = 5.0
    /// Below this level (dBFS) the end of a track counts as silence.
    public static let defaultSilenceThreshold = -50.0
}

/// How the equalizer's gains move to new values without a click: in steps, one per buffer that flows through it,
/// over `duration` of audio and never more than `maxStep` dB at a time. An IIR filter whose gain jumps changes its
/// output at once (a step in the waveform, heard as a click); many small steps sound like a short sweep.
///
/// The values are the ten band gains then the preamp, in dB. Pure arithmetic, driven by the stream's own time: the
/// same buffers give the same steps whether the audio plays in real time or renders to a file.
public struct EqualizerRamp: Sendable, Equatable {
    /// How much audio a whole change takes at least, in seconds.
    public static let duration = 0.05
    /// The largest change of any value between two buffers, in dB.
    public static let maxStep = 0.75

    /// The values applied now.
    public private(set) var current: [Double]
    /// Where they are going.
    public private(set) var target: [Double]
    private var start: [Double]
    private var elapsed = 0.0

    /// Settled at `values`.
    public init(_ values: [Double] = EqualizerCurve.flat.values) {
        current = values
        target = values
        start = values
    }

    /// Whether the current values are the target.
    public var isSettled: Bool { current == target }

    /// Starts moving from where the values are now towards `values`.
    public mutating func retarget(_ values: [Double]) {
        guard values != target else { return }
        target = values
        start = current
        elapsed = 0
    }

    /// Jumps to `values` (nothing is heard: stopped, or before anything flows).
    public mutating func settle(at values: [Double]) {
        current = values
        target = values
        start = values
        elapsed = 0
    }

    /// The values for a buffer of `seconds` that is about to be processed; nil when they do not change.
    public mutating func advance(by seconds: Double) -> [Double]? {
        guard !isSettled else { return nil }
        elapsed += max(0, seconds)
        let fraction = min(1, elapsed / Self.duration)
        var next = current
        for i in current.indices {
            let wanted = start[i] + (target[i] - start[i]) * fraction
            next[i] = min(current[i] + Self.maxStep, max(current[i] - Self.maxStep, wanted))
            // Land exactly on the target, so a ramp ends and "flat" is exactly 0 dB.
            if abs(next[i] - target[i]) < 1e-9 { next[i] = target[i] }
        }
        current = next
        return next
    }
}

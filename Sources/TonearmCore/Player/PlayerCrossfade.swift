import Foundation
import Playback

/// Crossfade: which joins fade (`CrossfadeSettings.transition`), and setting it live (CLI, bus, MPD, web).
extension Player {
    /// `[playback.crossfade]` as it stands (the config, and what was set live since).
    public var crossfadeSettings: CrossfadeSettings { crossfade }

    /// Sets how long tracks overlap (0 turns crossfade off); effective from the next join, and kept across restarts.
    public func setCrossfade(seconds: Double) throws {
        try change(\.seconds, to: seconds, within: CrossfadeSettings.secondsRange,
                   "crossfade must be a number of seconds from 0 (off) to \(Int(CrossfadeFormat.maximumSeconds))")
    }

    /// Sets the level (dBFS) below which a track's end counts as silence and is skipped before a fade.
    public func setCrossfadeSilence(threshold: Double) throws {
        try change(\.silenceThreshold, to: threshold, within: CrossfadeSettings.silenceRange,
                   "the silence threshold is a level in dBFS from -96 to 0")
    }

    /// One setting changed live: checked, kept across restarts, applied.
    private func change(_ setting: WritableKeyPath<CrossfadeSettings, Double>, to value: Double,
                        within range: ClosedRange<Double>, _ refusal: String) throws {
        guard value.isFinite, range.contains(value) else { throw TonearmError.invalidValue(refusal) }
        guard value != crossfade[keyPath: setting] else { return }
        crossfade[keyPath: setting] = value
        crossfadeSetLive = true
        applyCrossfade()
    }

    /// Hands the settings to the engine, re-plans the joins ahead and tells the faces.
    func applyCrossfade(announce: Bool = true) {
        engine.setCrossfade(seconds: crossfade.seconds, curve: crossfade.curve, silenceThreshold: crossfade.silenceThreshold)
        refreshHandover()
        guard announce else { return }
        emitWithState(.crossfadeChanged(seconds: crossfade.seconds, silenceThreshold: crossfade.silenceThreshold))
        scheduleSave()
    }

    /// A skip while playing fades the cut track out under the new one (`on-skip`), when crossfade is on.
    func fadeSkip() {
        guard status == .playing, crossfade.isOn, crossfade.onSkip > 0 else { return }
        engine.fadeNextLoad(seconds: crossfade.onSkip)
    }
}

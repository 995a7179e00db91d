import Foundation
import Playback

/// Crossfade: which joins fade (`CrossfadeSettings.transition`), and setting it live (CLI, bus, MPD, web).
extension Player {
    /// `[playback.crossfade]` as it stands (the config, and what was set live since).
    public var crossfadeSettings: CrossfadeSettings { crossfade }

    /// Sets how long tracks overlap (0 turns crossfade off); effective from the next join, and kept across restarts.
    public func setCrossfade(seconds: Double) throws {
        guard seconds.isFinite, CrossfadeSettings.secondsRange.contains(seconds) else {
            throw TonearmError.invalidValue("crossfade must be a number of seconds from 0 (off) to \(Int(CrossfadeFormat.maximumSeconds))")
        }
        guard seconds != crossfade.seconds else { return }
        crossfade.seconds = seconds
        crossfadeSetLive = true
        applyCrossfade()
    }

    /// Sets the level (dBFS) below which a track's end counts as silence and is skipped before a fade.
    public func setCrossfadeSilence(threshold: Double) throws {
        guard threshold.isFinite, CrossfadeSettings.silenceRange.contains(threshold) else {
            throw TonearmError.invalidValue("the silence threshold is a level in dBFS from -96 to 0")
        }
        guard threshold != crossfade.silenceThreshold else { return }
        crossfade.silenceThreshold = threshold
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

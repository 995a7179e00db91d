import Foundation
import Playback

/// The graphic equalizer: switched on, off or to a preset, and changed band by band, live.
extension Player {
    /// The equalizer now.
    public var equalizerState: EqualizerState { equalizer }

    /// "off", "on" (the last curve again), "custom" (the same), or a preset's name (which switches it on).
    public func setEqualizer(named name: String) throws {
        let key = name.lowercased().trimmingCharacters(in: .whitespaces)
        var new = equalizer
        switch key {
        case "off":
            new.enabled = false
        case "on", "custom":
            new.enabled = true
        default:
            guard let curve = equalizerSettings.preset(named: key) else {
                throw TonearmError.invalidValue("no equalizer preset '\(name)': use off, on or one of "
                                                + equalizerSettings.presetNames.joined(separator: ", "))
            }
            new = EqualizerState(enabled: true, preset: key, curve: curve)
        }
        change(to: new)
    }

    /// Ten band gains in dB (switches it on, as custom bands unless they are the preset's own).
    public func setEqualizerBands(_ bands: [Double]) throws {
        let checked = try EqualizerSettings.checkBands(bands, what: "EqualizerBands")
        var new = equalizer
        new.enabled = true
        new.curve = EqualizerCurve(bands: checked, preamp: equalizer.curve.preamp)
        if new.curve.bands != equalizer.curve.bands { new.preset = nil }
        change(to: new)
    }

    /// The preamp in dB (the preset's name stays; bands do not change).
    public func setEqualizerPreamp(_ preamp: Double) throws {
        var new = equalizer
        new.curve.preamp = try EqualizerSettings.checkPreamp(preamp)
        change(to: new)
    }

    /// What the engine plays with: nil when off; with clipping prevention as configured.
    func applyEqualizer() {
        engine.setEqualizer(equalizerSettings.engineCurve(equalizer))
    }

    private func change(to new: EqualizerState) {
        guard new != equalizer else { return }
        equalizer = new
        equalizerSetLive = true
        applyEqualizer()
        emitWithState(.equalizerChanged(new))
        scheduleSave()
    }
}

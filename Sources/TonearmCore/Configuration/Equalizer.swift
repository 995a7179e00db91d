import Foundation
import Playback

/// The equalizer as the player holds it: on or off, the curve, and the preset it came from.
public struct EqualizerState: Sendable, Equatable, Codable {
    public var enabled: Bool
    /// The preset the curve is (nil: bands set one by one).
    public var preset: String?
    public var curve: EqualizerCurve

    public init(enabled: Bool = false, preset: String? = "flat", curve: EqualizerCurve = .flat) {
        self.enabled = enabled
        self.preset = preset
        self.curve = curve
    }

    /// "off", the preset's name, or "custom".
    public var name: String { enabled ? (preset ?? "custom") : "off" }
}

/// `[playback.equalizer]`: the graphic equalizer at start, clipping prevention, and named presets.
public struct EqualizerSettings: Sendable, Equatable {
    /// The presets every Tonearm has, in dB from 29 Hz to 15 kHz: gentle shelves (bass, treble), the ear's weaker
    /// lows and highs at low volume (loudness), and speech's presence range lifted over rumble and hiss (voice).
    public static let builtInPresets: [(name: String, curve: EqualizerCurve)] = [
        ("flat", .flat),
        ("bass", EqualizerCurve(bands: [6, 5, 4, 2.5, 1, 0, 0, 0, 0, 0])),
        ("treble", EqualizerCurve(bands: [0, 0, 0, 0, 0, 0.5, 1.5, 3, 4.5, 6])),
        ("loudness", EqualizerCurve(bands: [5, 4, 2.5, 0.5, -1, -1, 0, 1.5, 3, 4])),
        ("voice", EqualizerCurve(bands: [-6, -4.5, -2.5, -0.5, 1.5, 3, 4, 3, 1, -1.5])),
    ]
    /// The bands' centre frequencies in Hz, lowest first (for faces, which do not see Playback).
    public static let frequencies = EqualizerCurve.frequencies
    /// Words that are not preset names.
    public static let reservedNames: Set<String> = ["off", "on", "custom"]

    /// Whether it is on at start (true when `preset` or `bands` is written and `enabled` is not).
    public var enabled = false
    /// The preset at start (nil: `bands` were given).
    public var preset: String? = "flat"
    /// The curve at start: the preset's, or `bands`; `preamp` replaces the preset's own.
    public var curve = EqualizerCurve.flat
    /// Lower the preamp by the largest band boost, so a boost does not push a full-scale signal over it.
    public var clippingPrevention = true
    /// The user's presets (`[playback.equalizer.presets]`); one named like a built-in replaces it.
    public var presets: [String: EqualizerCurve] = [:]

    /// Off, flat, clipping prevention on, no presets of the user's.
    public init() {}

    /// The built-in names in their order, then the user's own, sorted.
    public var presetNames: [String] {
        let builtIn = Self.builtInPresets.map(\.name)
        return builtIn + presets.keys.filter { !builtIn.contains($0) }.sorted()
    }

    /// The curve of a preset (the user's first), by name, case-insensitively.
    public func preset(named name: String) -> EqualizerCurve? {
        let key = name.lowercased()
        return presets[key] ?? Self.builtInPresets.first { $0.name == key }?.curve
    }

    /// What the player starts with.
    public var initialState: EqualizerState { EqualizerState(enabled: enabled, preset: preset, curve: curve) }

    /// The curve the engine gets for `state` (nil: off): with clipping prevention, the preamp lowered by the largest
    /// boost.
    public func engineCurve(_ state: EqualizerState) -> EqualizerCurve? {
        guard state.enabled else { return nil }
        return clippingPrevention ? state.curve.guardedAgainstClipping : state.curve
    }

    /// Ten band gains in dB, or an error naming the band and the range.
    public static func checkBands(_ bands: [Double], what: String = "bands") throws(TonearmError) -> [Double] {
        guard bands.count == 10 else {
            throw TonearmError.invalidValue("\(what) must be 10 gains in dB (29 Hz … 15 kHz), not \(bands.count)")
        }
        let range = EqualizerCurve.bandRange
        for (i, b) in bands.enumerated() where !(b.isFinite && range.contains(b)) {
            throw TonearmError.invalidValue("\(what): band \(i) (\(EqualizerCurve.label(i))) must be from \(ConfigSection.text(range.lowerBound)) to \(ConfigSection.text(range.upperBound)) dB, not \(b)")
        }
        return bands
    }

    /// A preamp in dB, or an error naming the range.
    public static func checkPreamp(_ preamp: Double) throws(TonearmError) -> Double {
        let range = EqualizerCurve.preampRange
        guard preamp.isFinite, range.contains(preamp) else {
            throw TonearmError.invalidValue("the preamp must be from \(ConfigSection.text(range.lowerBound)) to \(ConfigSection.text(range.upperBound)) dB, not \(preamp)")
        }
        return preamp
    }
}

extension EqualizerSettings {
    static let keys = ["enabled", "preset", "bands", "preamp", "clipping-prevention", "presets"]

    /// Reads the `[playback.equalizer]` table; errors name the key and the fix.
    public init(section table: [String: ConfigValue], origin: String) throws {
        let name = "\(origin): [playback.equalizer]"
        let section = try ConfigSection(name, table, known: Self.keys)
        self.init()
        clippingPrevention = try section.bool("clipping-prevention", clippingPrevention)
        if let value = table["presets"] {
            guard case .table(let presets) = value else {
                throw section.fail("presets", "a table such as [playback.equalizer.presets] with NAME = [10 gains in dB]")
            }
            for (key, value) in presets {
                let presetName = key.lowercased()
                guard !Self.reservedNames.contains(presetName), !presetName.isEmpty,
                      presetName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                    throw TonearmError(.invalidConfig, "\(name) presets.\(key): a preset name is letters, digits, - and _, and not off, on or custom")
                }
                self.presets[presetName] = try Self.curve(value, name: "\(name) presets.\(key)")
            }
        }
        if table["bands"] != nil, table["preset"] != nil {
            throw TonearmError(.invalidConfig, "\(name) has both preset and bands: keep one (bands = [10 gains] is a curve of its own)")
        }
        if table["bands"] != nil {
            curve = EqualizerCurve(bands: try Self.numbers(table["bands"]!, name: "\(name) bands"))
            preset = nil
        } else if let chosen = try section.string("preset") {
            guard let found = preset(named: chosen) else {
                throw section.fail("preset", "one of " + presetNames.map { "\"\($0)\"" }.joined(separator: ", ")
                                   + " (or a preset of your own under [playback.equalizer.presets])")
            }
            curve = found
            preset = chosen.lowercased()
        }
        if table["preamp"] != nil {
            curve.preamp = try section.number("preamp", 0, EqualizerCurve.preampRange)
        }
        enabled = try section.bool("enabled", table["preset"] != nil || table["bands"] != nil)
    }

    /// A preset: `[10 gains]` or `{ bands = [10 gains], preamp = dB }`.
    private static func curve(_ value: ConfigValue, name: String) throws -> EqualizerCurve {
        switch value {
        case .array:
            return EqualizerCurve(bands: try numbers(value, name: name))
        case .table(let table):
            let section = try ConfigSection(name, table, known: ["bands", "preamp"])
            guard let bands = table["bands"] else { throw section.fail("bands", "10 gains in dB, from 29 Hz to 15 kHz") }
            let preamp = try section.number("preamp", 0, EqualizerCurve.preampRange)
            return EqualizerCurve(bands: try numbers(bands, name: name + " bands"), preamp: preamp)
        default:
            throw TonearmError(.invalidConfig, "\(name) must be 10 gains in dB such as [3, 2, 1, 0, 0, 0, 0, 1, 2, 3], not \(value)")
        }
    }

    private static func numbers(_ value: ConfigValue, name: String) throws -> [Double] {
        guard case .array(let items) = value else {
            throw TonearmError(.invalidConfig, "\(name) must be 10 gains in dB such as [3, 2, 1, 0, 0, 0, 0, 1, 2, 3], not \(value)")
        }
        let numbers = try items.map { item -> Double in
            switch item {
            case .int(let i): return Double(i)
            case .double(let d): return d
            default: throw TonearmError(.invalidConfig, "\(name) must be numbers (dB), not \(item)")
            }
        }
        do {
            return try checkBands(numbers, what: name)
        } catch {
            throw TonearmError(.invalidConfig, error.message)
        }
    }

    /// The keys with their values, for `tonearm config`.
    public var values: [(key: String, value: ConfigValue)] {
        var rows: [(key: String, value: ConfigValue)] = [("enabled", .bool(enabled))]
        if let preset {
            rows.append(("preset", .string(preset)))
        } else {
            rows.append(("bands", .array(curve.bands.map { .double($0) })))
        }
        rows.append(("preamp", .double(curve.preamp)))
        rows.append(("clipping-prevention", .bool(clippingPrevention)))
        for name in presets.keys.sorted() {
            let p = presets[name]!
            rows.append(("presets.\(name)", .table(["bands": .array(p.bands.map { .double($0) }), "preamp": .double(p.preamp)])))
        }
        return rows
    }

    /// The settings as TOML lines of `[playback.equalizer]`, each with where it came from.
    func describe(source: (String) -> Configuration.Source) -> [String] {
        values.map { "\($0.key) = \($0.value)  # \(source($0.key.hasPrefix("presets.") ? "presets" : $0.key).rawValue)" }
    }
}

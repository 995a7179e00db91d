import Foundation

/// Which gain evens out loudness: none, each track's, the album's, or album while an album plays in order and track
/// otherwise (`auto`).
public enum ReplayGainMode: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case off, track, album, auto

    public var description: String { rawValue }

    /// Parses a mode name; the error lists the valid ones.
    public static func parse(_ text: String) throws -> ReplayGainMode {
        guard let mode = ReplayGainMode(rawValue: text.lowercased().trimmingCharacters(in: .whitespaces)) else {
            throw TonearmError.invalidValue("unknown ReplayGain mode '\(text)': use off, track, album or auto")
        }
        return mode
    }
}

/// `[playback.replaygain]`: how gains are applied.
public struct ReplayGainSettings: Sendable, Equatable {
    public var mode: ReplayGainMode = .off
    /// dB added to every track that has a gain (tagged or measured).
    public var preamp = 0.0
    /// dB applied to tracks with no gain at all (not tagged, not measured yet, streams, MIDI): mpd's
    /// replaygain_missing_preamp, mpv's replaygain-fallback.
    public var preampUntagged = 0.0
    /// Never raise a track above full scale: the gain is lowered so that peak × gain ≤ 1.
    public var clippingPrevention = true

    /// The allowed range of both preamps, in dB.
    public static let preampRange: ClosedRange<Double> = -30...30

    /// The defaults: off, 0 dB, 0 dB, clipping prevention on.
    public init() {}

    /// Whether album gain applies to a track: always for `album`, with `auto` only when the queue plays in order
    /// (not shuffled) and a neighbour in play order comes from the same album.
    public static func usesAlbumGain(_ mode: ReplayGainMode, shuffle: Bool, albumNeighbour: Bool) -> Bool {
        switch mode {
        case .off, .track: return false
        case .album: return true
        case .auto: return !shuffle && albumNeighbour
        }
    }

    /// The linear factor to apply to a track's samples. Album gain falls back to track gain when the track has none;
    /// a track with no gain gets `preampUntagged`; clipping prevention uses the peak that goes with the gain chosen.
    public func factor(for loudness: TrackLoudness?, album: Bool, mode: ReplayGainMode? = nil) -> Double {
        guard (mode ?? self.mode) != .off else { return 1 }
        var gain: Double?
        var peak: Double?
        if let loudness {
            if album, let g = loudness.albumGain {
                gain = g
                peak = loudness.albumPeak ?? loudness.trackPeak
            } else if let g = loudness.trackGain {
                gain = g
                peak = loudness.trackPeak
            } else if let g = loudness.albumGain {
                gain = g
                peak = loudness.albumPeak
            }
        }
        let decibels = gain.map { $0 + preamp } ?? preampUntagged
        var linear = pow(10, decibels / 20)
        if clippingPrevention, let peak, peak > 0, linear * peak > 1 { linear = 1 / peak }
        return linear
    }
}

extension ReplayGainSettings {
    static let keys = ["mode", "preamp", "preamp-untagged", "clipping-prevention"]

    /// Reads the `[playback.replaygain]` table; errors name the key and the fix.
    public init(section table: [String: ConfigValue], origin: String) throws {
        let section = try ConfigSection("\(origin): [playback.replaygain]", table, known: Self.keys)
        self.init()
        mode = try section.choice("mode", mode)
        preamp = try section.number("preamp", preamp, Self.preampRange)
        preampUntagged = try section.number("preamp-untagged", preampUntagged, Self.preampRange)
        clippingPrevention = try section.bool("clipping-prevention", clippingPrevention)
    }

    /// The settings as TOML lines of `[playback.replaygain]`, each with where it came from.
    func describe(source: (String) -> Configuration.Source) -> [String] {
        values.map { "\($0.key) = \($0.value)  # \(source($0.key).rawValue)" }
    }

    /// The four keys with their values, in the order the README lists them.
    public var values: [(key: String, value: ConfigValue)] {
        [("mode", .string(mode.rawValue)), ("preamp", .double(preamp)), ("preamp-untagged", .double(preampUntagged)),
         ("clipping-prevention", .bool(clippingPrevention))]
    }
}

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

/// What is known about a track's loudness, in ReplayGain 2.0 terms: gains in dB to reach −18 LUFS, peaks as linear
/// sample values (1 = full scale). From the file's tags (REPLAYGAIN_*, R128_* converted) or measured by Tonearm.
public struct TrackLoudness: Sendable, Codable, Equatable {
    /// Where the figures come from.
    public enum Source: String, Sendable, Codable { case tags, measured }

    public var trackGain: Double?
    public var trackPeak: Double?
    public var albumGain: Double?
    public var albumPeak: Double?
    public var source: Source

    /// A loudness record with these fields.
    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil,
                source: Source = .tags) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
        self.source = source
    }

    /// True when it carries no gain at all.
    public var isEmpty: Bool { trackGain == nil && albumGain == nil }

    /// The ReplayGain 2.0 reference loudness.
    public static let referenceLUFS = -18.0
    /// The loudness R128_* gains are relative to (RFC 7845).
    public static let r128ReferenceLUFS = -23.0

    /// The gain (dB) that brings `lufs` integrated loudness to the ReplayGain reference.
    public static func gain(forLoudness lufs: Double) -> Double { referenceLUFS - lufs }

    /// The fields of a file's tags as TagLib's property map names them (upper-case keys), or nil when none says
    /// anything about gain. REPLAYGAIN_* wins over R128_* when both are there; R128 gains (Q7.8 fixed point, dB
    /// relative to −23 LUFS) are moved to the −18 LUFS reference (+5 dB).
    public init?(tagFields fields: [String: [String]]) {
        func decibels(_ key: String) -> Double? { fields[key]?.first.flatMap(Self.parseDecibels) }
        func peak(_ key: String) -> Double? { fields[key]?.first.flatMap(Self.parsePeak) }
        func r128(_ key: String) -> Double? {
            guard let text = fields[key]?.first?.trimmingCharacters(in: .whitespaces), let q78 = Int(text),
                  (-32768...32767).contains(q78) else { return nil }
            return Double(q78) / 256 + (Self.referenceLUFS - Self.r128ReferenceLUFS)
        }
        self.init(trackGain: decibels("REPLAYGAIN_TRACK_GAIN") ?? r128("R128_TRACK_GAIN"),
                  trackPeak: peak("REPLAYGAIN_TRACK_PEAK"),
                  albumGain: decibels("REPLAYGAIN_ALBUM_GAIN") ?? r128("R128_ALBUM_GAIN"),
                  albumPeak: peak("REPLAYGAIN_ALBUM_PEAK"), source: .tags)
        if isEmpty { return nil }
    }

    /// "-6.02 dB", "+3.1 dB", "-6.02": dB within ±60 (taggers write nothing wilder; a garbled tag is ignored).
    static func parseDecibels(_ text: String) -> Double? {
        var s = text.trimmingCharacters(in: .whitespaces)
        if s.lowercased().hasSuffix("db") { s = String(s.dropLast(2)).trimmingCharacters(in: .whitespaces) }
        if s.hasPrefix("+") { s.removeFirst() }
        guard let value = Double(s), value.isFinite, abs(value) <= 60 else { return nil }
        return value
    }

    /// A linear peak such as "0.891251" (0 < peak ≤ 100: float files may exceed full scale).
    static func parsePeak(_ text: String) -> Double? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0, value <= 100 else { return nil }
        return value
    }

    /// Tag fields as loudgain and most taggers write them (ReplayGain 2.0, −18 LUFS reference).
    public var tagFields: [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        if let g = trackGain { out.append(("REPLAYGAIN_TRACK_GAIN", String(format: "%.2f dB", g))) }
        if let p = trackPeak { out.append(("REPLAYGAIN_TRACK_PEAK", String(format: "%.6f", p))) }
        if let g = albumGain { out.append(("REPLAYGAIN_ALBUM_GAIN", String(format: "%.2f dB", g))) }
        if let p = albumPeak { out.append(("REPLAYGAIN_ALBUM_PEAK", String(format: "%.6f", p))) }
        return out
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

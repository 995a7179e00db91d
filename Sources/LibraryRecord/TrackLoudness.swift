import Foundation

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

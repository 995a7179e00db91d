import Foundation
import Testing
@testable import TonearmCore

/// The pure gain logic: mode × tags × preamp × peak → linear factor, tag parsing, config.
@Suite struct ReplayGainTests {
    static func db(_ factor: Double) -> Double { 20 * log10(factor) }

    struct Row: Sendable, CustomStringConvertible {
        var mode: ReplayGainMode
        var loudness: TrackLoudness?
        var album: Bool
        var preamp = 0.0
        var untagged = 0.0
        var clip = true
        var expectedDB: Double
        var description: String { "\(mode) album=\(album) \(String(describing: loudness)) preamp=\(preamp) untagged=\(untagged) clip=\(clip)" }
    }

    static let both = TrackLoudness(trackGain: -6, trackPeak: 0.5, albumGain: -4, albumPeak: 0.9)
    static let trackOnly = TrackLoudness(trackGain: -7.5, trackPeak: 0.3)
    static let hot = TrackLoudness(trackGain: 6, trackPeak: 0.9, albumGain: 3, albumPeak: 0.95)
    static let rows: [Row] = [
        Row(mode: .off, loudness: both, album: true, expectedDB: 0),
        Row(mode: .off, loudness: nil, album: false, untagged: -5, expectedDB: 0),
        Row(mode: .track, loudness: both, album: false, expectedDB: -6),
        Row(mode: .album, loudness: both, album: true, expectedDB: -4),
        Row(mode: .album, loudness: trackOnly, album: true, expectedDB: -7.5),  // no album gain: the track's
        Row(mode: .track, loudness: both, album: false, preamp: 3, expectedDB: -3),
        Row(mode: .track, loudness: nil, album: false, preamp: 3, untagged: -4, expectedDB: -4),
        Row(mode: .auto, loudness: TrackLoudness(albumGain: -2), album: false, expectedDB: -2),  // only an album gain
        // Clipping prevention: +6 dB on a 0.9 peak is held to 1/0.9 (+0.92 dB); off, the gain stands.
        Row(mode: .track, loudness: hot, album: false, expectedDB: db(1 / 0.9)),
        Row(mode: .track, loudness: hot, album: false, clip: false, expectedDB: 6),
        Row(mode: .album, loudness: hot, album: true, expectedDB: db(1 / 0.95)),
        Row(mode: .track, loudness: both, album: false, preamp: 13, expectedDB: db(1 / 0.5)),  // preamp pushes it to the peak
        Row(mode: .track, loudness: TrackLoudness(trackGain: 4), album: false, expectedDB: 4),  // no peak known: not held
    ]

    @Test(arguments: rows) func factor(_ row: Row) {
        var settings = ReplayGainSettings()
        settings.mode = row.mode
        settings.preamp = row.preamp
        settings.preampUntagged = row.untagged
        settings.clippingPrevention = row.clip
        let factor = settings.factor(for: row.loudness, album: row.album)
        #expect(abs(Self.db(factor) - row.expectedDB) < 0.001, "\(row): \(Self.db(factor)) dB")
    }

    @Test func autoIsAlbumOnlyInOrderWithinAnAlbum() {
        #expect(ReplayGainSettings.usesAlbumGain(.auto, shuffle: false, albumNeighbour: true))
        #expect(!ReplayGainSettings.usesAlbumGain(.auto, shuffle: true, albumNeighbour: true))
        #expect(!ReplayGainSettings.usesAlbumGain(.auto, shuffle: false, albumNeighbour: false))
        #expect(ReplayGainSettings.usesAlbumGain(.album, shuffle: true, albumNeighbour: false))
        #expect(!ReplayGainSettings.usesAlbumGain(.track, shuffle: false, albumNeighbour: true))
    }

    @Test func tagsParse() {
        let rg = TrackLoudness(tagFields: ["REPLAYGAIN_TRACK_GAIN": ["-6.02 dB"], "REPLAYGAIN_TRACK_PEAK": ["0.891251"],
                                           "REPLAYGAIN_ALBUM_GAIN": ["+1.5 dB"], "REPLAYGAIN_ALBUM_PEAK": ["1.2"]])
        #expect(rg == TrackLoudness(trackGain: -6.02, trackPeak: 0.891251, albumGain: 1.5, albumPeak: 1.2, source: .tags))
        // R128: Q7.8 dB relative to -23 LUFS; +5 dB to the ReplayGain reference.
        let r128 = TrackLoudness(tagFields: ["R128_TRACK_GAIN": ["-2048"], "R128_ALBUM_GAIN": ["384"]])
        #expect(r128?.trackGain == -3 && r128?.albumGain == 6.5)
        // REPLAYGAIN_* wins over R128_*.
        #expect(TrackLoudness(tagFields: ["REPLAYGAIN_TRACK_GAIN": ["-1 dB"], "R128_TRACK_GAIN": ["0"]])?.trackGain == -1)
        #expect(TrackLoudness(tagFields: ["TITLE": ["x"]]) == nil)
        #expect(TrackLoudness(tagFields: ["REPLAYGAIN_TRACK_GAIN": ["loud"], "R128_TRACK_GAIN": ["99999"]]) == nil)
        #expect(TrackLoudness(tagFields: ["REPLAYGAIN_TRACK_GAIN": ["-200 dB"]]) == nil, "a wild value is ignored")
        #expect(TrackLoudness.gain(forLoudness: -23) == 5)
    }

    @Test func configReadsAndRefuses() throws {
        let c = try Configuration.parse("""
        [playback.replaygain]
        mode = "auto"
        preamp = 2
        preamp-untagged = -6.5
        clipping-prevention = false
        """)
        #expect(c.replayGain.mode == .auto && c.replayGain.preamp == 2 && c.replayGain.preampUntagged == -6.5)
        #expect(!c.replayGain.clippingPrevention)
        #expect(c.describe().contains("mode = \"auto\"  # file"))
        #expect(Configuration().replayGain == ReplayGainSettings())
        for bad in ["[playback.replaygain]\nmode = \"loud\"", "[playback.replaygain]\npreamp = 40", "[playback.replaygain]\npreamp = \"3\"",
                    "[playback.replaygain]\nclipping-prevention = 1", "[playback.replaygain]\nlimit = 1", "[playback.crossfade]\nx = 1"] {
            #expect(throws: TonearmError.self, "\(bad)") { try Configuration.parse(bad) }
        }
        #expect(throws: TonearmError.self) { try ReplayGainMode.parse("loud") }
        #expect(try ReplayGainMode.parse("Album") == .album)
    }
}

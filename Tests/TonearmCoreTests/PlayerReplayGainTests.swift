import Foundation
import Playback
import TestSupport
import Testing
@testable import TonearmCore

/// Which gain the Player gives each item: album gain for an album played in order under `auto`, track gain when
/// shuffled or for a single, a live mode change applied at once; against the real state machine, no GStreamer.
@Suite struct PlayerReplayGainTests {
    /// Files named "ALBUM-N.flac" belong to ALBUM (track gain -6 dB, album gain -3 dB); others are singles (-10 dB).
    struct GainSource: SourcePlugin {
        let name = "gains"
        func canResolve(_ uri: URL) -> Bool { uri.isFileURL }
        func resolve(_ uri: URL) async throws -> TrackMetadata {
            let stem = uri.deletingPathExtension().lastPathComponent
            var m = TrackMetadata(url: uri.absoluteString, title: stem)
            m.length = 60_000_000
            if let dash = stem.firstIndex(of: "-") {
                m.album = String(stem[..<dash])
                m.albumArtists = ["Someone"]
                m.loudness = TrackLoudness(trackGain: -6, trackPeak: 0.3, albumGain: -3, albumPeak: 0.4)
            } else {
                m.loudness = TrackLoudness(trackGain: -10, trackPeak: 0.3)
            }
            return m
        }
    }

    static func linear(_ db: Double) -> Double { pow(10, db / 20) }

    @Test func autoPicksAlbumInOrderAndTrackWhenShuffledAndModesChangeLive() async throws {
        let engine = MachineEngine()
        let art = TemporaryDirectory("player-gain")
        var settings = ReplayGainSettings()
        settings.mode = .auto
        let player = Player(engine: engine, plugins: [GainSource()], stateStore: nil, artCache: ArtCache(folder: art.url), replayGain: settings)
        await player.start()
        let uris = try ["Blue-1.flac", "Blue-2.flac", "single.flac"].map { name -> String in
            let file = art.file(name)
            try Data().write(to: file)
            return file.absoluteString
        }
        let ids = try await player.add(uris, at: .end)
        let tokens = ids.map { $0.serial! }
        func gain(_ i: Int) -> Double? { engine.gains[tokens[i]] }

        await player.goTo(ids[0])
        #expect(abs((gain(0) ?? 0) - Self.linear(-3)) < 1e-9, "in order within an album: album gain")
        await player.goTo(ids[2])
        #expect(abs((gain(2) ?? 0) - Self.linear(-10)) < 1e-9, "a single: its track gain")
        await player.goTo(ids[1])
        #expect(abs((gain(1) ?? 0) - Self.linear(-3)) < 1e-9, "its album neighbour comes before it")

        // Shuffled: what follows is planned at its track gain.
        await player.setShuffle(true)
        await player.goTo(ids[0])
        #expect(abs((gain(0) ?? 0) - Self.linear(-6)) < 1e-9, "shuffled: track gain")

        // A live change reaches what plays at once.
        await player.setReplayGainMode(.off)
        #expect(gain(0) == 1)
        #expect(await player.replayGainMode == .off)
        await player.setReplayGainMode(.album)
        #expect(abs((gain(0) ?? 0) - Self.linear(-3)) < 1e-9, "album mode: album gain even shuffled")
        await player.shutdown()
    }
}

import Foundation
import Playback
import TestSupport
import Testing
@testable import TonearmCore

/// `[playback.equalizer]` and the player's equalizer, against the fake engine: no GStreamer.
@Suite struct EqualizerSettingsTests {
    @Test("config: defaults off and flat; a preset or bands switch it on; presets of one's own")
    func parsing() throws {
        let none = try Configuration.parse("")
        #expect(none.equalizer.initialState == EqualizerState(enabled: false, preset: "flat", curve: .flat))
        #expect(none.describe().contains("[playback.equalizer]\nenabled = false  # default\npreset = \"flat\"  # default"))

        let bass = try Configuration.parse("[playback.equalizer]\npreset = \"bass\"\npreamp = -2\n").equalizer
        #expect(bass.enabled && bass.preset == "bass")
        #expect(bass.curve.bands == EqualizerSettings.builtInPresets[1].curve.bands && bass.curve.preamp == -2)

        let custom = try Configuration.parse("""
            [playback.equalizer]
            bands = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
            enabled = false
            clipping-prevention = false
            presets.night = [-3, -2, -1, 0, 0, 0, 0, -1, -2, -3]
            presets.bass = { bands = [9, 8, 7, 0, 0, 0, 0, 0, 0, 0], preamp = -4 }
            """).equalizer
        #expect(!custom.enabled && custom.preset == nil && custom.curve.bands[9] == 10)
        #expect(custom.presetNames == ["flat", "bass", "treble", "loudness", "voice", "night"])
        #expect(custom.preset(named: "Bass") == EqualizerCurve(bands: [9, 8, 7], preamp: -4), "the user's bass replaces the built-in")
        #expect(custom.engineCurve(EqualizerState(enabled: true, preset: nil, curve: custom.curve)) == custom.curve, "no clipping prevention")
    }

    @Test("config errors name the key and the fix", arguments: [
        ("preset = \"loud\"", "[playback.equalizer] preset must be one of \"flat\", \"bass\""),
        ("bands = [1, 2, 3]", "bands must be 10 gains in dB"),
        ("bands = [0, 0, 0, 0, 0, 0, 0, 0, 0, 20]", "band 9 (15 kHz) must be from -24 to 12 dB"),
        ("preset = \"bass\"\nbands = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]", "has both preset and bands"),
        ("preamp = 30", "[playback.equalizer] preamp must be a number from -24 to 12"),
        ("presets.off = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]", "presets.off: a preset name is letters"),
        ("presets = 3", "presets must be a table such as [playback.equalizer.presets]"),
        ("gain = 3", "[playback.equalizer] has no key \"gain\""),
    ])
    func errors(body: String, message: String) {
        do {
            _ = try Configuration.parse("[playback.equalizer]\n" + body + "\n")
            Issue.record("accepted: \(body)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test("the player: presets, bands and preamp reach the engine with clipping prevention, one event each, saved")
    func player() async throws {
        let engine = MachineEngine()
        let art = TemporaryDirectory("player-eq")
        let player = Player(engine: engine, plugins: [], stateStore: nil, artCache: ArtCache(folder: art.url))
        let events = player.events.subscribe()
        await player.start()
        #expect(engine.equalizer == nil, "off by default: nothing in the path")

        try await player.setEqualizer(named: "bass")
        let bass = EqualizerSettings.builtInPresets[1].curve
        #expect(engine.equalizer == bass.guardedAgainstClipping)
        #expect(engine.equalizer?.preamp == -6)
        #expect(player.state.snapshot.equalizer.name == "bass")
        #expect(player.state.snapshot.equalizerPresets.first == "flat")

        try await player.setEqualizerBands([0, 0, 0, 0, 0, 3, 0, 0, 0, 0])
        try await player.setEqualizerPreamp(-1)
        #expect(engine.equalizer == EqualizerCurve(bands: [0, 0, 0, 0, 0, 3], preamp: -4))
        #expect(player.state.snapshot.equalizer == EqualizerState(enabled: true, preset: nil, curve: EqualizerCurve(bands: [0, 0, 0, 0, 0, 3], preamp: -1)))
        await #expect(throws: TonearmError.self) { try await player.setEqualizer(named: "loud") }
        await #expect(throws: TonearmError.self) { try await player.setEqualizerBands([1, 2]) }
        await #expect(throws: TonearmError.self) { try await player.setEqualizerPreamp(99) }
        try await player.setEqualizer(named: "off")
        #expect(engine.equalizer == nil)
        try await player.setEqualizer(named: "off")  // no change, no event

        var seen: [EqualizerState] = []
        for await item in events {
            if case .equalizerChanged(let state) = item.event { seen.append(state) }
            if seen.count == 4 { break }
        }
        #expect(seen.map(\.name) == ["bass", "custom", "custom", "off"])

        // Saved as set live, and put back by a new player.
        let saved = await player.persistedState()
        #expect(saved.equalizer?.curve.bands[5] == 3 && saved.equalizer?.enabled == false)
        let again = MachineEngine()
        let next = Player(engine: again, plugins: [], stateStore: nil, artCache: ArtCache(folder: art.url))
        await next.start()
        var on = saved
        on.equalizer?.enabled = true
        await next.restore(on)
        #expect(again.equalizer == EqualizerCurve(bands: [0, 0, 0, 0, 0, 3], preamp: -4))
        let data = try JSONEncoder().encode(on)
        #expect(try JSONDecoder().decode(PersistedState.self, from: data) == on)
    }
}

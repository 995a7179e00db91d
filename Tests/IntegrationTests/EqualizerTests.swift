import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The equalizer through the real daemon: the command line and org.tonearm.Player1 change it, PropertiesChanged
/// announces it, and a live change outlives a restart.
@Suite(.serialized, .timeLimit(.minutes(4))) struct EqualizerDaemonTests {
    static func bands(_ value: DBusValue) -> [Double] {
        (value.unwrapped.arrayValue ?? []).compactMap { $0.unwrapped.doubleValue }
    }

    @Test func presetsAndBandsOverTheCommandLineAndTheBusAreAnnouncedAndKeptAcrossARestart() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.equalizer]\npresets.mine = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n")
        let a = try d.sine("a.wav", seconds: 30)
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([a])
        #expect(try await d.get(Daemon.tonearm, "Equalizer").unwrapped.stringValue == "off")
        let presets = try await d.get(Daemon.tonearm, "EqualizerPresets").unwrapped.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(presets == ["flat", "bass", "treble", "loudness", "voice", "mine"])

        // The command line switches to a preset while the track plays; the bus says so.
        try await d.waitFor("playing") { try await d.status() == "Playing" }
        let set = try await d.tonearm("eq", "bass")
        #expect(set.status == 0, "\(set.out)")
        #expect(set.out.hasPrefix("bass"), "\(set.out)")
        #expect(try await d.get(Daemon.tonearm, "Equalizer").unwrapped.stringValue == "bass")
        try await d.waitFor("PropertiesChanged with Equalizer = bass") {
            changes.named("PropertiesChanged").contains {
                $0.arguments.count > 1 && $0.arguments[1].vardictValue?["Equalizer"]?.unwrapped.stringValue == "bass"
            }
        }
        let bass = Self.bands(try await d.get(Daemon.tonearm, "EqualizerBands"))
        #expect(bass.count == 10 && bass[0] > 0 && bass[9] == 0, "\(bass)")

        // Bands over the bus: custom. Wrong values are refused with org.tonearm.Error.InvalidValue.
        let custom: [Double] = [0, 0, 0, 0, 0, 4, 0, 0, 0, -3]
        try await d.set(Daemon.tonearm, "EqualizerBands", .array(element: "d", custom.map { .double($0) }))
        #expect(try await d.get(Daemon.tonearm, "Equalizer").unwrapped.stringValue == "custom")
        #expect(Self.bands(try await d.get(Daemon.tonearm, "EqualizerBands")) == custom)
        for (name, value) in [("Equalizer", DBusValue.string("loud")),
                              ("EqualizerBands", .array(element: "d", [.double(1), .double(2)])),
                              ("EqualizerBands", .array(element: "d", Array(repeating: .double(20), count: 10))),
                              ("EqualizerPreamp", .double(40))] {
            do {
                try await d.set(Daemon.tonearm, name, value)
                Issue.record("\(name) = \(value) was taken")
            } catch let e as DBusError {
                #expect(e.name == "org.tonearm.Error.InvalidValue", "\(name): \(e)")
            }
        }
        // Band edits on the command line start from a preset; a bad band name is refused.
        let edited = try await d.tonearm("eq", "mine", "1k=-2", "preamp=-1.5")
        #expect(edited.status == 0, "\(edited.out)")
        #expect(Self.bands(try await d.get(Daemon.tonearm, "EqualizerBands")) == [1, 2, 3, 4, 5, -2, 7, 8, 9, 10])
        #expect(try await d.get(Daemon.tonearm, "EqualizerPreamp").unwrapped.doubleValue == -1.5)
        #expect(try await d.tonearm("eq", "50k=3").status != 0)
        let table = try await d.tonearm("eq")
        #expect(table.out.contains("947 Hz") && table.out.contains("-2.0 dB"), "\(table.out)")

        // Kept across a restart, as set live.
        #expect(await d.terminate() == 0)
        try await d.start()
        #expect(try await d.get(Daemon.tonearm, "Equalizer").unwrapped.stringValue == "custom")
        #expect(Self.bands(try await d.get(Daemon.tonearm, "EqualizerBands")) == [1, 2, 3, 4, 5, -2, 7, 8, 9, 10])
        #expect(try await d.get(Daemon.tonearm, "EqualizerPreamp").unwrapped.doubleValue == -1.5)
        _ = try await d.tonearm("eq", "off")
        #expect(try await d.get(Daemon.tonearm, "Equalizer").unwrapped.stringValue == "off")
    }
}

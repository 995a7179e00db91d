import Foundation
import TestSupport
import Testing
@testable import TonearmCore

@Suite struct ConfigurationTests {
    @Test func defaultsWhenTheFileIsMissing() throws {
        let dir = TemporaryDirectory()
        let c = try Configuration.load(from: dir.file("none.toml"))
        #expect(c.audioSink == "autoaudiosink")
        #expect(c.tickInterval == .seconds(1))
        #expect(c.sources["audio-sink"] == .defaultValue)
    }

    @Test func readsKeysAndPluginSections() throws {
        let c = try Configuration.parse("""
        audio-sink = "wavenc ! filesink location=/tmp/x.wav"
        tick-interval = 0.25
        [plugins.midi]
        soundfont = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
        """)
        #expect(c.audioSink == "wavenc ! filesink location=/tmp/x.wav")
        #expect(c.tickInterval == .milliseconds(250))
        #expect(c.pluginSections["midi"]?["soundfont"] == .string("/usr/share/sounds/sf2/FluidR3_GM.sf2"))
        #expect(c.sources["tick-interval"] == .file)
        #expect(c.describe().contains("tick-interval = 0.25  # file"))
    }

    @Test func errorsNameTheProblem() {
        #expect(throws: TonearmError.self) { try Configuration.parse("audio-sink = 3") }
        #expect(throws: TonearmError.self) { try Configuration.parse("tick-interval = 0") }
        #expect(throws: TonearmError.self) { try Configuration.parse("volume-boost = true") }
        do {
            _ = try Configuration.parse("audio-sink = \"x\"\ntick-interval = [", origin: "c.toml")
            Issue.record("a syntax error must throw")
        } catch let e as TonearmError {
            #expect(e.name == "org.tonearm.Error.InvalidConfig")
            #expect(e.message.contains("c.toml") && e.message.contains("line 2"))
        } catch { Issue.record("unexpected \(error)") }
    }
}

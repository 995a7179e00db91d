import Foundation
import Playback
import Testing
@testable import TonearmCore

/// `[outputs.NAME]`, `output` and the reconnect settings in config.toml.
@Suite struct OutputSettingsTests {
    @Test func everyKindReadsBackWithItsDefaults() throws {
        let c = try Configuration.parse("""
        output = "kitchen"
        output-retries = 5
        output-retry-interval = 0.5
        [outputs.kitchen]
        kind = "snapcast-pipe"
        path = "/tmp/snapfifo"
        [outputs.den]
        kind = "snapcast-tcp"
        host = "192.168.1.20"
        sample-format = "44100:16:2"
        [outputs.desk]
        kind = "local"
        device = "hw:1,0"
        [outputs.radio]
        kind = "pipeline"
        sink = "audioconvert ! vorbisenc ! oggmux ! shout2send"
        """)
        let all = c.outputs.all(audioSink: c.audioSink)
        #expect(all.map(\.name) == ["default", "den", "desk", "kitchen", "radio"])
        #expect(all[0].kind == .local(device: nil, element: nil), "default is the audio-sink line")
        #expect(all[1].kind == .snapcastTCP(host: "192.168.1.20", port: 4953, format: .init(rate: 44100, channels: 2)))
        #expect(all[2].kind == .local(device: "hw:1,0", element: nil))
        #expect(all[3].kind == .snapcastPipe(path: "/tmp/snapfifo", format: .init(rate: 48000, channels: 2)))
        #expect(all[4].kind == .pipeline("audioconvert ! vorbisenc ! oggmux ! shout2send"))
        #expect(c.outputs.recovery == OutputRecoveryPolicy(attempts: 5, interval: .milliseconds(500)))
        #expect(c.outputs.startOutput(audioSink: c.audioSink, sinkFromCommandLine: false).name == "kitchen")
        #expect(c.outputs.startOutput(audioSink: "fakesink", sinkFromCommandLine: true) == .sink("fakesink"),
                "--audio-sink on the command line plays first")
        let text = c.describe()
        #expect(text.contains("[outputs.kitchen]\nkind = \"snapcast-pipe\"  # file\npath = \"/tmp/snapfifo\"  # file"))
        #expect(text.contains("output = \"kitchen\"  # file"))
    }

    @Test("an output switched to live starts next time, unless the config's output changed or it is gone", arguments: [
        // (the config's output, saved: name and the config's output then, --audio-sink given, where it starts)
        (nil, nil, nil, false, "default"),
        (nil, "den", nil, false, "den"),
        ("kitchen", "den", "kitchen", false, "den"),
        ("kitchen", "den", nil, false, "kitchen"),
        (nil, "den", "kitchen", false, "default"),
        (nil, "attic", nil, false, "default"),
        (nil, "den", nil, true, "default"),
    ] as [(String?, String?, String?, Bool, String)])
    func theStartOutput(_ configured: String?, _ savedName: String?, _ savedConfigured: String?, _ commandLine: Bool,
                        _ expected: String) throws {
        var text = "[outputs.kitchen]\nkind = \"local\"\n[outputs.den]\nkind = \"local\"\n"
        if let configured { text = "output = \"\(configured)\"\n" + text }
        let c = try Configuration.parse(text)
        let saved = savedName.map { SavedOutput(name: $0, configured: savedConfigured) }
        #expect(c.outputs.startOutput(audioSink: c.audioSink, sinkFromCommandLine: commandLine, saved: saved).name == expected)
    }

    @Test func withoutOutputsTheAudioSinkIsTheOnlyOneCalledDefault() throws {
        let c = try Configuration.parse("audio-sink = \"pulsesink\"")
        #expect(c.outputs.all(audioSink: c.audioSink) == [AudioOutput(name: "default", kind: .pipeline("pulsesink"))])
        #expect(c.outputs.startOutput(audioSink: c.audioSink, sinkFromCommandLine: false).name == "default")
    }

    @Test("mistakes say where and what to write", arguments: [
        ("[outputs.a]\npath = \"/tmp/x\"", "[outputs.a] needs kind"),
        ("[outputs.a]\nkind = \"airplay\"", "kind must be one of"),
        ("[outputs.a]\nkind = \"snapcast-pipe\"\npath = \"snapfifo\"", "absolute path of snapserver's FIFO"),
        ("[outputs.a]\nkind = \"snapcast-pipe\"\npath = \"/tmp/f\"\nsample-format = \"48000:24:2\"", "Tonearm writes 16-bit samples"),
        ("[outputs.a]\nkind = \"snapcast-tcp\"\nport = 70000", "port must be a whole number from 1 to 65535"),
        ("[outputs.a]\nkind = \"snapcast-pipe\"\npath = \"/tmp/f\"\nhost = \"x\"", "has no key \"host\""),
        ("[outputs.a]\nkind = \"pipeline\"", "needs sink ="),
        ("output = \"attic\"", "names no output (outputs: default)"),
        ("output-retries = -1", "output-retries must be"),
        ("outputs = 3", "outputs must be tables"),
    ])
    func mistakes(_ text: String, _ message: String) {
        #expect { try Configuration.parse(text, origin: "c.toml") } throws: { error in
            guard let e = error as? TonearmError else { return false }
            return e.reason == .invalidConfig && e.message.contains("c.toml") && e.message.contains(message)
        }
    }
}

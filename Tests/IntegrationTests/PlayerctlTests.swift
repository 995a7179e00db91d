import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// The daemon driven by playerctl, as desktop widgets and scripts drive it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PlayerctlTests {
    @Test func transportVolumeLoopShuffleAndMetadata() async throws {
        let d = try Daemon()
        // Two minutes: on a loaded machine the playerctl calls after the seeks took long enough for 30 s to run out.
        let a = try d.sine("alpha.wav", seconds: 120)
        let b = try d.sine("beta.wav", seconds: 30, frequency: 550)
        let c = try d.sine("gamma.wav", seconds: 30, frequency: 660)
        try await d.start([a, b, c])

        try await d.waitFor("Playing") { try await d.playerctl("status") == "Playing" }
        try await d.waitFor("title") { try await d.playerctl("metadata", "--format", "{{title}}") == "alpha" }
        let first = try await d.playerctl("metadata", "mpris:trackid").trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        #expect(first.hasPrefix("/org/tonearm/track/"))

        try await d.playerctl("play-pause")
        try await d.waitFor("Paused") { try await d.playerctl("status") == "Paused" }
        try await d.playerctl("play-pause")
        try await d.waitFor("Playing again") { try await d.playerctl("status") == "Playing" }

        try await d.playerctl("next")
        try await d.waitFor("beta") { try await d.playerctl("metadata", "--format", "{{title}}") == "beta" }
        #expect(try await d.playerctl("metadata", "mpris:trackid") != "'\(first)'")
        try await d.playerctl("previous")
        try await d.waitFor("alpha") { try await d.playerctl("metadata", "--format", "{{title}}") == "alpha" }

        // Paused, so the position stays where each command puts it however long a loaded machine takes between them.
        try await d.playerctl("pause")
        try await d.waitFor("paused for the seeks") { try await d.playerctl("status") == "Paused" }
        try await d.playerctl("position", "5")
        try await d.waitFor("position 5") { (try await Double(d.playerctl("position")) ?? 0) >= 4.9 }
        try await d.playerctl("position", "2-")
        try await d.waitFor("position back 2") {
            let p = try await Double(d.playerctl("position")) ?? 0
            return p >= 2.9 && p < 4.5
        }
        try await d.playerctl("position", "1+")
        try await d.waitFor("position +1") { (try await Double(d.playerctl("position")) ?? 0) >= 3.9 }
        try await d.playerctl("play")
        try await d.waitFor("playing after the seeks") { try await d.playerctl("status") == "Playing" }

        try await d.playerctl("volume", "0.5")
        try await d.waitFor("volume") { try await d.playerctl("volume") == "0.500000" }
        try await d.playerctl("loop", "Playlist")
        try await d.waitFor("loop") { try await d.playerctl("loop") == "Playlist" }
        try await d.playerctl("shuffle", "On")
        try await d.waitFor("shuffle") { try await d.playerctl("shuffle") == "On" }
        try await d.playerctl("shuffle", "Off")
        try await d.playerctl("loop", "None")
        let url = try await d.playerctl("metadata", "--format", "{{xesam:url}}")
        #expect(url == Daemon.uri(a))
        let length = try await d.playerctl("metadata", "--format", "{{duration(mpris:length)}}")
        #expect(length == "2:00")

        try await d.playerctl("stop")
        try await d.waitFor("Stopped") { try await d.playerctl("status") == "Stopped" }
    }

    @Test func followSeesChanges() async throws {
        let d = try Daemon()
        let a = try d.sine("one.wav", seconds: 30)
        let b = try d.sine("two.wav", seconds: 30)
        try await d.start([a, b])
        try await d.waitFor("Playing") { try await d.playerctl("status") == "Playing" }

        let follow = try ChildProcess(ChildProcess.which("playerctl"), ["--player=tonearm", "--follow", "metadata", "--format", "{{status}} {{title}}"],
                                      environment: d.environment)
        let lines = LineCollector(follow)
        try await d.waitFor("first line") { lines.lines.contains("Playing one") }
        try await d.playerctl("next")
        try await d.waitFor("follow saw next") { lines.lines.contains("Playing two") }
        try await d.playerctl("pause")
        try await d.waitFor("follow saw pause") { lines.lines.contains("Paused two") }
    }
}

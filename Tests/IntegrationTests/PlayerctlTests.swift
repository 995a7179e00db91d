import DBus
import Foundation
import TestSupport
import Testing

/// The daemon driven by playerctl, as desktop widgets and scripts drive it.
@Suite(.timeLimit(.minutes(3))) struct PlayerctlTests {
    @Test func transportVolumeLoopShuffleAndMetadata() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 8)
        let b = try d.sine("beta.wav", seconds: 8, frequency: 550)
        let c = try d.sine("gamma.wav", seconds: 8, frequency: 660)
        try await d.start([a, b, c])

        try await d.waitFor("Playing") { try d.playerctl("status") == "Playing" }
        try await d.waitFor("title") { try d.playerctl("metadata", "--format", "{{title}}") == "alpha" }
        let first = try d.playerctl("metadata", "mpris:trackid")
        #expect(first.hasPrefix("/org/tonearm/track/"))

        try d.playerctl("play-pause")
        try await d.waitFor("Paused") { try d.playerctl("status") == "Paused" }
        try d.playerctl("play-pause")
        try await d.waitFor("Playing again") { try d.playerctl("status") == "Playing" }

        try d.playerctl("next")
        try await d.waitFor("beta") { try d.playerctl("metadata", "--format", "{{title}}") == "beta" }
        #expect(try d.playerctl("metadata", "mpris:trackid") != first)
        try d.playerctl("previous")
        try await d.waitFor("alpha") { try d.playerctl("metadata", "--format", "{{title}}") == "alpha" }

        try d.playerctl("position", "5")
        try await d.waitFor("position 5") { (try Double(d.playerctl("position")) ?? 0) >= 4.9 }
        try d.playerctl("position", "2-")
        try await d.waitFor("position back 2") {
            let p = try Double(d.playerctl("position")) ?? 0
            return p >= 2.9 && p < 4.5
        }
        try d.playerctl("position", "1+")
        try await d.waitFor("position +1") { (try Double(d.playerctl("position")) ?? 0) >= 3.9 }

        try d.playerctl("volume", "0.5")
        try await d.waitFor("volume") { try d.playerctl("volume") == "0.500000" }
        try d.playerctl("loop", "Playlist")
        try await d.waitFor("loop") { try d.playerctl("loop") == "Playlist" }
        try d.playerctl("shuffle", "On")
        try await d.waitFor("shuffle") { try d.playerctl("shuffle") == "On" }
        try d.playerctl("shuffle", "Off")
        try d.playerctl("loop", "None")
        #expect(try d.playerctl("metadata", "--format", "{{xesam:url}}") == Daemon.uri(a))
        #expect(try d.playerctl("metadata", "--format", "{{duration(mpris:length)}}") == "0:08")

        try d.playerctl("stop")
        try await d.waitFor("Stopped") { try d.playerctl("status") == "Stopped" }
    }

    @Test func followSeesChanges() async throws {
        let d = try Daemon()
        let a = try d.sine("one.wav", seconds: 6)
        let b = try d.sine("two.wav", seconds: 6)
        try await d.start([a, b])
        try await d.waitFor("Playing") { try d.playerctl("status") == "Playing" }

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["playerctl", "--player=tonearm", "--follow", "metadata", "--format", "{{status}} {{title}}"]
        p.environment = d.environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        defer { p.terminate() }
        let lines = LineCollector(out.fileHandleForReading)
        try await d.waitFor("first line") { lines.lines.contains("Playing one") }
        try d.playerctl("next")
        try await d.waitFor("follow saw next") { lines.lines.contains("Playing two") }
        try d.playerctl("pause")
        try await d.waitFor("follow saw pause") { lines.lines.contains("Paused two") }
    }
}

/// Reads lines from a pipe as they come.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []
    private var partial = ""

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] h in
            let data = h.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock {
                self.partial += String(decoding: data, as: UTF8.self)
                while let nl = self.partial.firstIndex(of: "\n") {
                    self.collected.append(String(self.partial[..<nl]))
                    self.partial = String(self.partial[self.partial.index(after: nl)...])
                }
            }
        }
    }

    var lines: [String] { lock.withLock { collected } }
}

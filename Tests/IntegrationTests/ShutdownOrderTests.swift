import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The daemon's parts start in order, each once the one before it has started, and a SIGTERM stops them in the
/// reverse order: the player, which saves the state, last. Read from the debug lines `tonearmd --verbose` writes.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ShutdownOrderTests {
    /// Every part with MPD and the web face on, in start order.
    static let parts = ["player", "library-index", "midi", "shares", "localsend", "library", "bus", "mpd-protocol", "web", "memory"]

    @Test func sigtermStopsThePartsInTheReverseOfTheirStartOrderThePlayerLast() async throws {
        let d = try Daemon()
        try d.writeConfig("[mpd-protocol]\nenabled = true\nport = 0\n")
        let a = try d.sine("a.wav", seconds: 30)
        try await d.start([a, "--verbose"])
        try await d.waitFor("every part started") { d.log.contains("tonearmd: started memory") }
        #expect(await d.terminate() == 0)

        let lines = d.log.components(separatedBy: "\n")
        #expect(Self.parts(lines, "started") == Self.parts, "\(d.log)")
        #expect(Self.parts(lines, "stopped") == Self.parts.reversed(), "\(d.log)")
        // The player saved the state as it stopped; the goodbye comes after it.
        let playerStopped = try #require(lines.firstIndex { $0.hasSuffix("tonearmd: stopped player") })
        let bye = try #require(lines.firstIndex { $0.hasSuffix("tonearmd: state saved; bye") })
        #expect(playerStopped < bye)
        let state = try String(contentsOf: d.home.file("state/tonearm/state.json"), encoding: .utf8)
        #expect(state.contains("a.wav"))
    }

    /// The parts named by "tonearmd: VERB NAME" lines, in log order.
    static func parts(_ lines: [String], _ verb: String) -> [String] {
        let marker = "tonearmd: \(verb) "
        return lines.compactMap { line in line.range(of: marker).map { String(line[$0.upperBound...]) } }
    }
}

import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// The MIDI browser through the daemon: `tonearm midi …` and the full-screen browser driven in tmux.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MIDIBrowserTests {
    static func tree(_ d: Daemon) throws -> URL {
        let root = d.home.url.appendingPathComponent("Music/MIDI")
        for (path, title) in [("Classical/Bach/Minuet.mid", "Minuet in G"), ("Classical/Bach/Prelude.mid", "Prelude in C"),
                              ("Pop/Hit.mid", "Hit"), ("Intro.mid", "Intro")] {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try SMFBytes(format: 0, division: 96, tracks: [Ev.name(title) + Ev.notes(40, ticks: 96) + Ev.end()]).write(to: url)
        }
        return root
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func commandLineListsPlaysAndResumes() async throws {
        let d = try Daemon()
        _ = try Self.tree(d)
        try await d.start()
        let ls = try await d.tonearm("midi", "ls", "--json")
        #expect(ls.status == 0)
        let entries = try #require(try Self.json(ls.out) as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["Classical", "Pop", "Intro.mid"])
        #expect(entries[2]["title"] as? String == "Intro")
        #expect(entries[2]["tracks"] as? Int == 1)
        #expect((entries[2]["duration"] as? Double).map { abs($0 - 20) < 1e-6 } == true)

        let text = try await d.tonearm("midi", "ls", "Classical/Bach")
        #expect(text.out.contains("Minuet.mid") && text.out.contains("Minuet in G") && text.out.contains("0:20"), "\(text.out)")

        let resumeNothing = try Self.json(try await d.tonearm("midi", "resume", "--json").out) as? [String: Any]
        #expect(resumeNothing?["folder"] as? String == "")
        #expect(resumeNothing?["selected"] is NSNull)

        let play = try await d.tonearm("midi", "play", "Classical/Bach/Prelude.mid")
        #expect(play.status == 0, "\(play)")
        try await d.waitFor("Prelude plays") { try await d.metadata()["xesam:title"]?.stringValue == "Prelude in C" }
        let resume = try #require(try Self.json(try await d.tonearm("midi", "resume", "--json").out) as? [String: Any])
        #expect(resume["folder"] as? String == "Classical/Bach")
        #expect(resume["selected"] as? String == "Prelude.mid")
        let trail = (resume["trail"] as? [[String: Any]])?.map { $0["path"] as? String }
        #expect(trail == ["", "Classical", "Classical/Bach"])

        for bad in ["../x.mid", "/etc/passwd", "Classical/../../x.mid"] {
            let refused = try await d.tonearm("midi", "play", bad)
            #expect(refused.status == 1, "\(bad): \(refused.out)")
        }
        #expect(try await d.tonearm("midi", "ls", "Nowhere").status == 1)
    }

    @Test func resumeSurvivesADaemonRestartAndAMovedRoot() async throws {
        let d = try Daemon()
        let root = try Self.tree(d)
        try await d.start()
        _ = try await d.call("org.tonearm.Browser1", "Choose", [.string("midi"), .string("Pop/Hit.mid")])
        _ = await d.terminate()
        // The folder moves; the config follows it.
        let moved = d.home.url.appendingPathComponent("Elsewhere/Songs")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: root, to: moved)
        let config = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.midi]\nfolder = \"\(moved.path)\"\n".write(to: config, atomically: true, encoding: .utf8)
        try await d.start()
        let reply = try await d.call("org.tonearm.Browser1", "Resume", [.string("midi")])
        #expect(reply[0] == .string("Pop"))
        #expect(reply[2] == .string("Hit.mid"))
        try FileManager.default.removeItem(at: moved.appendingPathComponent("Pop/Hit.mid"))
        let gone = try await d.call("org.tonearm.Browser1", "Resume", [.string("midi")])
        #expect(gone[0] == .string("Pop"))
        #expect(gone[2] == .string(""))
    }

    @Test func interactiveBrowserInTmux() async throws {
        let d = try Daemon()
        _ = try Self.tree(d)
        try await d.start()
        _ = try await d.call("org.tonearm.Browser1", "Choose", [.string("midi"), .string("Classical/Bach/Prelude.mid")])
        let tmux = Tmux(socket: "tonearm-test-\(getpid())")
        defer { tmux.killServer() }
        let env = d.environment
        let command = ["env", "DBUS_SESSION_BUS_ADDRESS=\(env["DBUS_SESSION_BUS_ADDRESS"]!)", "HOME=\(env["HOME"]!)",
                       Daemon.binDirectory.appendingPathComponent("tonearm").path, "midi", "browse"]
        try await tmux.start(command)

        try await tmux.waitFor("opens at the last choice") { screen in
            screen.first?.contains("MIDI files › Classical › Bach") == true && screen.contains { $0.contains("▸ Prelude.mid") }
        }
        try await tmux.keys("Up")
        try await tmux.waitFor("moves up") { $0.contains { $0.contains("▸ Minuet.mid") } }
        try await tmux.keys("Enter")
        try await d.waitFor("Minuet plays") { try await d.metadata()["xesam:title"]?.stringValue == "Minuet in G" }
        try await tmux.waitFor("says it plays") { $0.contains { $0.contains("Playing Minuet in G") } }
        try await tmux.keys("BSpace")
        try await tmux.waitFor("goes up") { screen in
            screen.first?.hasPrefix("MIDI files › Classical") == true && screen.first?.contains("Bach") == false
                && screen.contains { $0.contains("▸ Bach/") }
        }
        try await tmux.keys("Home")
        try await tmux.waitFor("at the top") { screen in
            screen.first?.trimmingCharacters(in: .whitespaces) == "MIDI files" && screen.contains { $0.contains("▸ Classical/") }
        }
        try await tmux.keys("Down")
        try await tmux.keys("Enter")
        try await tmux.waitFor("descends") { screen in
            screen.first?.contains("MIDI files › Pop") == true && screen.contains { $0.contains("▸ Hit.mid") }
        }
        try await tmux.keys("Enter")
        try await d.waitFor("Hit plays") { try await d.metadata()["xesam:title"]?.stringValue == "Hit" }
        try await tmux.keys("q")
        let quit = try await eventually { try await !tmux.isRunning() }
        #expect(quit, "q ends the browser")
        let reply = try await d.call("org.tonearm.Browser1", "Resume", [.string("midi")])
        #expect(reply[0] == .string("Pop") && reply[2] == .string("Hit.mid"))
    }
}

import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 3: kill -9 at random moments while playing, seeking, editing the queue and scanning the library; after
/// each restart the queue, current track and settings are intact, the state file and the index are sound, and no
/// received file is lost.
@Suite(.serialized, .timeLimit(.minutes(20))) struct CrashRestartTests {
    /// Whether the state file and the position record hold what the daemon shows: the queue, its current entry and
    /// (unless stopped) the position, within the second the record may lag while playing.
    static func savedAgrees(_ d: Daemon) async throws -> Bool {
        let folder = d.home.url.appendingPathComponent("state/tonearm")
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("state.json")),
              let state = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let queue = state["queue"] as? [String: Any], let entries = queue["tracks"] as? [[String: Any]] else { return false }
        let saved = entries.compactMap { ($0["id"] as? [String: Any])?["path"] as? String }
        let savedCurrent = (queue["currentID"] as? [String: Any])?["path"] as? String
        let current = try await d.trackID()
        guard try await d.tracks() == saved,
              savedCurrent == (current.isEmpty || current.hasSuffix("/NoTrack") ? nil : current) else { return false }
        guard let savedCurrent, try await d.status() != "Stopped" else { return true }
        var savedPosition = (state["position"] as? NSNumber)?.int64Value ?? 0
        let record = (try? String(contentsOf: folder.appendingPathComponent("state.json.position"), encoding: .utf8)) ?? ""
        let fields = record.split(whereSeparator: \.isWhitespace)
        if fields.count == 2, fields[0] == savedCurrent, let figure = Int64(fields[1]) { savedPosition = figure }
        return abs(try await d.position() - savedPosition) <= 1_500_000
    }

    @Test func killedAtRandomItComesBackWhole() async throws {
        let rounds = Reliability.size(8, 50)
        let d = try Daemon()
        let music = d.home.url.appendingPathComponent("Music")
        let library = music.appendingPathComponent("Library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        for i in 0..<Reliability.size(200, 1000) {
            try WAV.sine(frequency: 200 + Double(i), seconds: 0.1, sampleRate: 8000, channels: 1).write(to: library.appendingPathComponent("t\(i).wav"))
        }
        let songs = try (0..<4).map { try d.sine("song\($0).wav", seconds: 60) }
        let inbox = music.appendingPathComponent("Inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let config = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.shares]\nsettle-seconds = 0.2\non-receive = \"add\"\n".write(to: config, atomically: true, encoding: .utf8)
        var random = SeededGenerator(seed: Reliability.seed)
        try await d.start(songs)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }

        var sent = 0
        var checks = 0
        var worstPositionError: Int64 = 0
        let activities = ["playing", "seeking", "queue edits", "library scan", "receiving"]
        var counts: [String: Int] = [:]
        for round in 0..<rounds {
            let activity = activities[Int(random.next() % UInt64(activities.count))]
            counts[activity, default: 0] += 1
            switch activity {
            case "seeking":
                for _ in 0..<5 { _ = try? await d.call(Daemon.player, "Seek", [.int64(Int64(random.next() % 4_000_000) - 1_000_000)]) }
            case "queue edits":
                _ = try? await d.call(Daemon.tonearm, "Enqueue", [.stringArray([Daemon.uri(songs[Int(random.next() % 4)])])])
                if let ids = try? await d.tracks(), ids.count > 4 { _ = try? await d.call(Daemon.trackList, "RemoveTrack", [.objectPath(ids[0])]) }
            case "library scan":
                _ = try? await d.call("org.tonearm.Library1", "Scan")
            case "receiving":
                try WAV.sine(frequency: 900 + Double(round), seconds: 0.2, sampleRate: 8000, channels: 1).write(to: inbox.appendingPathComponent("r\(round).wav"))
                sent += 1
            default:
                break
            }
            // Once the files on disk hold what the daemon shows, note it, then kill at a random moment of the next half second.
            try await d.waitFor("round \(round)'s state saved", timeout: .seconds(30)) { try await Self.savedAgrees(d) }
            let before = (tracks: (try? await d.tracks().count) ?? -1, current: try? await d.metadata()["xesam:url"]?.stringValue,
                          volume: try? await d.get(Daemon.player, "Volume").doubleValue, loop: try? await d.get(Daemon.player, "LoopStatus").stringValue,
                          position: (try? await d.position()) ?? 0)
            await letTimePass(.milliseconds(Int(random.next() % 500)), because: "the kill comes at a random moment")
            await d.kill9()
            try await d.start()
            try await d.waitFor("restored") { try await d.status() != "" }
            let tracks = try await d.tracks().count
            let current = try await d.metadata()["xesam:url"]?.stringValue
            let volume = try await d.get(Daemon.player, "Volume").doubleValue
            let loop = try await d.get(Daemon.player, "LoopStatus").stringValue
            let position = try await d.position()
            #expect(tracks == before.tracks, "round \(round) (\(activity)): \(tracks) tracks, \(before.tracks) before")
            #expect(current == before.current, "round \(round): current \(current ?? "nil"), was \(before.current ?? "nil")")
            #expect(volume == before.volume && loop == before.loop, "round \(round): settings changed")
            if current == before.current, before.position > 0 {
                worstPositionError = max(worstPositionError, abs(position - before.position) - 500_000)
                #expect(abs(position - before.position) <= 2_500_000, "round \(round): position \(position) µs, was \(before.position) µs (+ up to 0.5 s played)")
            }
            checks += 1
            if try await d.status() != "Playing" { _ = try? await d.call(Daemon.player, "Play") }
            if d.process?.isRunning != true { break }
        }
        // The state file parses, the index passes SQLite's own check, every received file is there.
        let state = try Data(contentsOf: d.home.url.appendingPathComponent("state/tonearm/state.json"))
        #expect((try? JSONSerialization.jsonObject(with: state)) != nil, "the state file is not valid JSON")
        let integrity = try await runProcess("/usr/bin/env", ["python3", "-c", """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('PRAGMA integrity_check').fetchone()[0])
            """, d.home.url.appendingPathComponent("data/tonearm/library.sqlite").path])
        #expect(integrity.out == "ok", "\(integrity.out) \(integrity.err)")
        try await d.waitFor("every sent file received", timeout: .seconds(30)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: music.appendingPathComponent("Received").path)) ?? []).count
                + ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []).count == sent
        }
        let received = ((try? FileManager.default.contentsOfDirectory(atPath: music.appendingPathComponent("Received").path)) ?? []).count
        Reliability.report(3, "Crash and restart", tried: [
            "\(rounds) rounds of kill -9 at a random moment (up to 0.5 s after a snapshot) during: "
                + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
            "a library of \(Reliability.size(200, 1000)) files scanned again and again; files dropped into the inbox while the daemon died",
        ], held: [
            "after each of \(checks) restarts: the same number of queue entries, the same current track, volume and loop; the position within 2 s",
            "the state file is valid JSON; SQLite's integrity_check on the library index: \(integrity.out)",
            "\(sent) files sent to the inbox: \(received) in Received, the rest still in the inbox; none lost",
        ], figures: [("restarts", "\(checks)"), ("worst position error beyond the 0.5 s the kill could wait (ms)", "\(max(0, worstPositionError) / 1000)"),
                     ("files sent / received", "\(sent) / \(received)")])
    }
}

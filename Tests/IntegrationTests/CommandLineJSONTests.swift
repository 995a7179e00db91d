import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// Every `tonearm` subcommand's --json output parses and says what the daemon says; exit codes; logs.
@Suite(.serialized, .timeLimit(.minutes(4))) struct CommandLineJSONTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    static func array(_ text: String) throws -> [Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any], "not a JSON array: \(text)")
    }

    @Test func everyCommandSpeaksJSONThatMatchesTheDaemon() async throws {
        let d = try Daemon()
        let music = d.home.url.appendingPathComponent("Music")
        try FileManager.default.createDirectory(at: music.appendingPathComponent("MIDI"), withIntermediateDirectories: true)
        let a = try d.sine("a.wav", seconds: 40), b = try d.sine("b.wav", seconds: 40), c = try d.sine("c.wav", seconds: 40)
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("Tune") + Ev.notes(8, ticks: 96) + Ev.end()])
            .write(to: music.appendingPathComponent("MIDI/tune.mid"))
        try await d.start([a, b])
        try await d.waitFor("Playing") { try await d.status() == "Playing" }

        // Player commands print the state afterwards.
        for (command, status) in [("pause", "Paused"), ("play", "Playing"), ("toggle", "Paused"), ("toggle", "Playing")] {
            let out = try await d.tonearm(command, "--json")
            #expect(out.status == 0, "\(command)")
            let state = try Self.object(out.out)
            let now = try await d.status()
            #expect(state["status"] as? String == status && now == status, "\(command): \(out.out)")
        }
        var state = try Self.object(try await d.tonearm("next", "--json").out)
        let afterNext = try await d.trackID()
        #expect(state["title"] as? String == "b" && state["trackId"] as? String == afterNext)
        state = try Self.object(try await d.tonearm("prev", "--json").out)
        #expect(state["title"] as? String == "a")
        state = try Self.object(try await d.tonearm("seek", "12", "--json").out)
        #expect((state["position"] as? Double).map { $0 >= 11.9 && $0 < 20 } == true, "\(state)")
        #expect(try Self.object(try await d.tonearm("volume", "30", "--json").out)["volume"] as? Double == 0.3)
        #expect(try Self.object(try await d.tonearm("volume", "--json").out)["volume"] as? Double == 0.3)
        let volume = try await d.get(Daemon.player, "Volume").doubleValue
        #expect(try Self.object(try await d.tonearm("status", "--json").out)["volume"] as? Double == volume)

        // The queue.
        var queue = try Self.object(try await d.tonearm("queue", "add", c, "--json").out)
        var tracks = try #require(queue["tracks"] as? [[String: Any]])
        var ids = try await d.tracks()
        let current = try await d.trackID()
        #expect(tracks.map { $0["trackId"] as? String } == ids)
        #expect(tracks.map { $0["title"] as? String } == ["a", "b", "c"])
        #expect(tracks.first { $0["current"] as? Bool == true }?["trackId"] as? String == current)
        queue = try Self.object(try await d.tonearm("queue", "move", "3", "1", "--json").out)
        tracks = try #require(queue["tracks"] as? [[String: Any]])
        ids = try await d.tracks()
        #expect(tracks.map { $0["title"] as? String } == ["c", "a", "b"])
        #expect(tracks.map { $0["trackId"] as? String } == ids)
        queue = try Self.object(try await d.tonearm("queue", "remove", "3", "--json").out)
        ids = try await d.tracks()
        #expect((queue["tracks"] as? [Any])?.count == 2 && ids.count == 2)
        queue = try Self.object(try await d.tonearm("queue", "shuffle", "on", "--json").out)
        let shuffle = try await d.get(Daemon.player, "Shuffle")
        #expect(queue["shuffle"] as? Bool == true && shuffle == .bool(true))
        queue = try Self.object(try await d.tonearm("queue", "loop", "queue", "--json").out)
        let loop = try await d.get(Daemon.player, "LoopStatus")
        #expect(queue["loop"] as? String == "Playlist" && loop == .string("Playlist"))
        queue = try Self.object(try await d.tonearm("queue", "goto", "1", "--json").out)
        ids = try await d.tracks()
        #expect(queue["current"] as? String == ids[0])
        queue = try Self.object(try await d.tonearm("queue", "insert", b, "--json").out)
        #expect((queue["tracks"] as? [Any])?.count == 3)
        queue = try Self.object(try await d.tonearm("queue", "list", "--json").out)
        ids = try await d.tracks()
        #expect((queue["tracks"] as? [[String: Any]])?.map { $0["trackId"] as? String } == ids)

        // The library, browsing, MIDI, sharing, setup.
        _ = try await d.tonearm("library", "scan", "--json")
        for arguments in [["library", "artists", "--json"], ["library", "albums", "--json"], ["library", "search", "title~a", "--json"],
                          ["library", "failures", "--json"], ["browse", "--json"], ["browse", "library", "--json"], ["midi", "ls", "--json"],
                          ["doctor", "--json"]] {
            let run = try await d.run(Daemon.binDirectory.appendingPathComponent("tonearm").path, arguments)
            #expect(throws: Never.self, "\(arguments): \(run.out)") { _ = try Self.array(run.out) }
        }
        let midi = try Self.array(try await d.tonearm("midi", "ls", "--json").out) as? [[String: Any]]
        #expect(midi?.first?["title"] as? String == "Tune")
        #expect(try Self.object(try await d.tonearm("midi", "play", "tune.mid", "--json").out)["title"] as? String == "Tune")
        try await d.waitFor("the MIDI file plays") { try await d.metadata()["xesam:title"]?.stringValue == "Tune" }
        #expect(try Self.object(try await d.tonearm("midi", "resume", "--json").out)["selected"] as? String == "tune.mid")
        let opened = try Self.object(try await d.tonearm("open", a, "--json").out)
        try await d.waitFor("a plays") { try await d.metadata()["xesam:title"]?.stringValue == "a" }
        let openedID = try await d.trackID()
        #expect((opened["tracks"] as? [String])?.first == openedID)
        let out = d.media.url.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let exported = try Self.object(try await d.tonearm("export", "current", out.path, "--json").out)
        #expect((exported["path"] as? String).map { FileManager.default.fileExists(atPath: $0) } == true)
        let config = try Self.object(try await d.tonearm("config", "--json").out)
        let settings = try #require(config["settings"] as? [[String: Any]])
        #expect(settings.contains { $0["key"] as? String == "soundfont" && $0["source"] as? String == "default" })
        let random = try await d.tonearm("library", "random", "--json")
        #expect(random.status == 0 && (try? JSONSerialization.jsonObject(with: Data(random.out.utf8))) != nil, "\(random.out)")
        state = try Self.object(try await d.tonearm("stop", "--json").out)
        #expect(state["status"] as? String == "Stopped")
        #expect(try Self.object(try await d.tonearm("queue", "clear", "--json").out)["tracks"] as? [Any] != nil)
        let left = try await d.tracks()
        #expect(left.isEmpty)
    }

    @Test func exitCodesForABadArgumentAndADaemonError() async throws {
        let d = try Daemon()
        try await d.start()
        #expect(try await d.tonearm("volume", "loud").status == 2)
        #expect(try await d.tonearm("queue", "move", "x", "1").status == 2)
        #expect(try await d.tonearm("completions", "tcsh").status == 2)
        // The daemon says no: nothing to seek in, no such root, a folder outside the MIDI root.
        #expect(try await d.tonearm("seek", "10").status == 1)
        #expect(try await d.tonearm("browse", "nowhere").status == 1)
        #expect(try await d.tonearm("midi", "ls", "..").status == 1)
        #expect(try await d.tonearm("queue", "remove", "4").status == 1)
        #expect(try await d.tonearm("export", "/nope.wav", "/tmp").status == 2, "a missing file is a bad argument: nothing is sent")
        let song = try d.sine("s.wav", seconds: 1)
        #expect(try await d.tonearm("export", song, "/no/such/folder").status == 1, "the daemon refuses the folder")
    }

    @Test func logsAreJournalLinesUnderSystemdAndVerboseShowsEveryCall() async throws {
        let d = try Daemon()
        // systemd hands the daemon a journal stream and names it in JOURNAL_STREAM (device:inode of stderr).
        #expect(FileManager.default.createFile(atPath: d.logFile.path, contents: nil))
        var info = stat()
        #expect(stat(d.logFile.path, &info) == 0)
        d.extraEnvironment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        try await d.start(["--verbose"])
        _ = try await d.call(Daemon.player, "Play").count
        try await d.waitFor("the call is logged") { d.log.contains("org.mpris.MediaPlayer2.Player.Play") }
        let lines = d.log.split(separator: "\n").filter { !$0.isEmpty && !$0.hasPrefix("0:") && !$0.contains("GStreamer-") }
        let ours = lines.filter { $0.contains("tonearm") }
        #expect(!ours.isEmpty)
        #expect(ours.allSatisfy { $0.first == "<" }, "journal lines carry a priority: \(ours.prefix(3))")
        #expect(ours.contains { $0.hasPrefix("<6>tonearmd: ready on the session bus") }, "\(ours.prefix(5))")
        #expect(ours.contains { $0.hasPrefix("<7>tonearm.mpris: ") && $0.contains("→ org.mpris.MediaPlayer2.Player.Play") })
    }

    @Test func logLinesInAFileCarryTheLocalISOTime() async throws {
        let d = try Daemon()
        d.extraEnvironment["TZ"] = "XYZ-3"  // POSIX for UTC+3, no tzdata needed
        try await d.start()
        try await d.waitFor("the ready line") { d.log.contains("ready on the session bus") }
        let line = try #require(d.log.split(separator: "\n").first { $0.contains("ready on the session bus") })
        // 2026-11-22T05:08:44.328+0000 info tonearmd: ready on the session bus as …
        let match = try #require(line.wholeMatch(of: /(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.\d{3}([+-])(\d\d)(\d\d) info tonearmd: ready on the session bus as .*/), "\(line)")
        var parts = tm()
        parts.tm_year = Int32(match.1)! - 1900
        parts.tm_mon = Int32(match.2)! - 1
        parts.tm_mday = Int32(match.3)!
        parts.tm_hour = Int32(match.4)!
        parts.tm_min = Int32(match.5)!
        parts.tm_sec = Int32(match.6)!
        let offset = (Int(match.8)! * 3600 + Int(match.9)! * 60) * (match.7 == "-" ? -1 : 1)
        let stamped = timegm(&parts) - offset
        #expect(match.7 == "+" && match.8 == "03" && match.9 == "00", "\(line)")
        #expect(abs(stamped - time(nil)) < 60, "the stamp is now, with its zone's offset: \(line)")
    }
}

import DBus
import DaemonHarness
import Foundation
import RawPaths
import TagFields
import TestSupport
import Testing

/// Lyrics through the real daemon: every source, the line signal against the clock and seeks, xesam:asText, and the
/// terminal views read back from tmux.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LyricsTests {
    typealias Line = LyricsMedia.Line

    /// The Lyrics property as lines (start -1 when untimed).
    static func lines(_ d: Daemon) async throws -> [Line] {
        (try await d.get(Daemon.tonearm, "Lyrics").arrayValue ?? []).map { item in
            guard case .structure(let f) = item.unwrapped else { return Line(-2, "?", []) }
            let words = (f[2].arrayValue ?? []).compactMap { w -> Int64? in
                guard case .structure(let p) = w.unwrapped else { return nil }
                return p[0].int64Value
            }
            return Line(f[0].int64Value ?? -2, f[1].stringValue ?? "?", words)
        }
    }

    /// Plays `path` alone and waits until lyrics from `source` are there.
    static func play(_ d: Daemon, _ path: String, source: String) async throws {
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(path)]), .bool(true)])
        try await d.waitFor("lyrics from \(source) for \(path)", timeout: .seconds(30)) {
            let url = try await d.metadata()["xesam:url"]?.stringValue
            let found = try await d.get(Daemon.tonearm, "LyricsSource").stringValue
            return url == Daemon.uri(path) && found == source
        }
    }

    /// A CBR MP3 of silence by lamemp3enc with an ID3v2.3 tag in front holding a SYLT frame (Latin-1, milliseconds).
    static func mp3WithSYLT(_ url: URL, seconds: Int, lines: [(UInt32, String)]) async throws {
        let raw = url.deletingPathExtension().appendingPathExtension("raw.mp3")
        let made = try await runProcess("/usr/bin/gst-launch-1.0", ["-q", "audiotestsrc", "wave=silence", "num-buffers=\(seconds * 44100 / 1024)",
                                                                   "samplesperbuffer=1024", "!", "audio/x-raw,rate=44100,channels=1", "!",
                                                                   "lamemp3enc", "!", "filesink", "location=\(raw.path)"])
        try #require(made.status == 0, "lamemp3enc: \(made.err)")
        var sylt: [UInt8] = [0x00] + Array("eng".utf8) + [0x02, 0x01, 0x00]
        for (ms, text) in lines { sylt += Array(text.utf8) + [0x00] + be32(ms) }
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] { Array(id.utf8) + be32(UInt32(body.count)) + [0, 0] + body }
        let frames = frame("TIT2", [0x00] + Array("Synced".utf8)) + frame("SYLT", sylt)
        let size = frames.count
        let header: [UInt8] = Array("ID3".utf8) + [3, 0, 0] + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
        try Data(header + frames + [UInt8](try Data(contentsOf: raw))).write(to: url)
    }

    static func encode(_ url: URL, _ encoder: [String]) async throws {
        let made = try await runProcess("/usr/bin/gst-launch-1.0", ["-q", "audiotestsrc", "num-buffers=40", "samplesperbuffer=4410", "!",
                                                                   "audio/x-raw,rate=44100,channels=1", "!", "audioconvert", "!"] + encoder
                                        + ["!", "filesink", "location=\(url.path)"])
        try #require(made.status == 0, "\(encoder): \(made.err)")
    }

    @Test func everySourceGivesItsLinesInOrderAtTheirTimes() async throws {
        let d = try Daemon()
        let midiFolder = d.home.url.appendingPathComponent("Music/MIDI")
        try FileManager.default.createDirectory(at: midiFolder, withIntermediateDirectories: true)
        let kar = midiFolder.appendingPathComponent("song.kar")
        try LyricsMedia.karaoke.write(to: kar)
        let gm = midiFolder.appendingPathComponent("lyric events.mid")
        try LyricsMedia.generalMIDI.write(to: gm)
        let city = midiFolder.appendingPathComponent("city_blues_redfarn.mid")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: LyricsMedia.cityBlues), to: city)

        // A WAV with a .lrc beside it whose name differs in case, holding word times and an offset.
        let wav = try d.sine("Sidecar.wav", seconds: 6)
        try """
            [ti:Sidecar]
            [offset:-100]
            [00:02.00]<00:02.00>Sec<00:02.50>ond
            [00:00.50]<00:00.50>First <00:01.00>line
            """.write(to: d.media.file("sidecar.LRC"), atomically: true, encoding: .utf8)
        let mp3 = d.media.file("synced.mp3")
        try await Self.mp3WithSYLT(mp3, seconds: 4, lines: [(1500, "Later"), (250, "Early"), (1500, "Same time, after")])
        let flac = d.media.file("tagged.flac")
        try await Self.encode(flac, ["flacenc"])
        try TagFields.write(flac.path, [("LYRICS", "Plain first\nPlain second\n\nNew verse")])
        let ogg = d.media.file("tagged.ogg")
        try await Self.encode(ogg, ["vorbisenc", "!", "oggmux"])
        try TagFields.write(ogg.path, [("LYRICS", "[00:01.00]Tag one\n[00:02.50]Tag two")])

        let asText = try await SignalRecorder(d.client, DBusMatchRule(path: Daemon.path, interface: "org.freedesktop.DBus.Properties",
                                                                     member: "PropertiesChanged"))
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("Wordless") + Ev.notes(4, ticks: 96) + Ev.end()])
            .write(to: midiFolder.appendingPathComponent("wordless.mid"))
        try await d.start()
        // The MIDI browser says which files have words.
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try await d.tonearm("midi", "ls", "--json").out.utf8)) as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0["name"] as? String ?? "?", $0["lyrics"] as? Bool) }) == [
            "song.kar": true, "lyric events.mid": true, "city_blues_redfarn.mid": true, "wordless.mid": false,
        ])
        let text = try await d.tonearm("midi", "ls")
        #expect(text.out.components(separatedBy: "\n").filter { $0.contains("♪") }.count == 3, "\(text.out)")
        try await Self.play(d, kar.path, source: "midi")
        #expect(try await Self.lines(d) == LyricsMedia.karaokeLines)
        #expect(try await d.get(Daemon.tonearm, "LyricsSynced") == .bool(true))
        #expect(try await d.metadata()["xesam:asText"]?.stringValue == "Hello world\nHow are you\n\nNaïve")
        // Found after the track started, so announced with a PropertiesChanged carrying the text (which may reach this
        // client after the Get above was answered).
        try await d.waitFor("the text announced") {
            asText.named("PropertiesChanged").contains { signal in
                signal.arguments.count > 1 && signal.arguments[1].vardictValue?["Metadata"]?.vardictValue?["xesam:asText"] != nil
            }
        }

        try await Self.play(d, gm.path, source: "midi")
        #expect(try await Self.lines(d) == LyricsMedia.generalMIDILines)

        try await Self.play(d, city.path, source: "midi")
        let cityLines = try await Self.lines(d)
        #expect(cityLines.flatMap(\.words).count == 144)
        #expect(cityLines.first == Line(2_500_000, "1. If you're going to the cicity ty", [2_500_000, 2_500_000, 2_750_000, 3_000_000, 3_250_000,
                                                                                         3_500_000, 3_750_000, 4_000_000, 4_000_000, 4_250_000, 4_250_000]))
        #expect(cityLines.map(\.start) == cityLines.map(\.start).sorted())

        try await Self.play(d, wav, source: "lrc")
        #expect(try await Self.lines(d) == [Line(600_000, "First line", [600_000, 1_100_000]), Line(2_100_000, "Second", [2_100_000, 2_600_000])])

        try await Self.play(d, mp3.path, source: "sylt")
        #expect(try await Self.lines(d) == [Line(250_000, "Early", []), Line(1_500_000, "Later", []), Line(1_500_000, "Same time, after", [])])

        try await Self.play(d, flac.path, source: "tag")
        #expect(try await Self.lines(d) == [Line(-1, "Plain first", []), Line(-1, "Plain second", []), Line(-1, "New verse", [])])
        #expect(try await d.get(Daemon.tonearm, "LyricsSynced") == .bool(false))
        #expect(try await d.get(Daemon.tonearm, "LyricsLine") == .int32(-1))
        #expect(try await d.metadata()["xesam:asText"]?.stringValue == "Plain first\nPlain second\n\nNew verse")

        try await Self.play(d, ogg.path, source: "tag")
        #expect(try await Self.lines(d) == [Line(1_000_000, "Tag one", []), Line(2_500_000, "Tag two", [])])

        // A track with none: the properties empty out and asText goes.
        let bare = try d.sine("bare.wav", seconds: 3)
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(bare)]), .bool(true)])
        try await d.waitFor("no lyrics") {
            let url = try await d.metadata()["xesam:url"]?.stringValue
            let found = try await d.get(Daemon.tonearm, "LyricsSource").stringValue
            return url == Daemon.uri(bare) && found == ""
        }
        #expect(try await Self.lines(d).isEmpty)
        #expect(try await d.metadata()["xesam:asText"] == nil)
    }

    /// A track whose name is not UTF-8 (a Latin-1 `é`, as old rips have) finds the `.lrc` beside it: Foundation's
    /// `URL.path` is empty for its URI, so the daemon reads the URI's own bytes.
    @Test func aTrackNamedInLatin1FindsItsLyricsFile() async throws {
        let d = try Daemon()
        let made = try d.sine("made.wav", seconds: 6)
        let folder = RawPath(d.media.url.path)
        let song = folder.appending(Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
        try #require(RawPath(made).withCString { from in song.withCString { rename(from, $0) } } == 0)
        let lrc = RawPath(bytes: try writeRaw(Array("[00:01.00]Un\n[00:03.00]Deux\n".utf8), folder: d.media.url,
                                              name: Array("caf".utf8) + [0xE9] + Array(".lrc".utf8)))
        // Foundation cannot remove what it cannot name.
        defer { for path in [song, lrc] { _ = path.withCString { unlink($0) } } }
        try await d.start()
        let uri = Daemon.uri(d.media.url.path) + "/caf%E9.wav"
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([uri]), .bool(true)])
        try await d.waitFor("lyrics from the .lrc beside caf%E9.wav") {
            let url = try await d.metadata()["xesam:url"]?.stringValue
            let found = try await d.get(Daemon.tonearm, "LyricsSource").stringValue
            return url == uri && found == "lrc"
        }
        #expect(try await Self.lines(d) == [Line(1_000_000, "Un", []), Line(3_000_000, "Deux", [])])
        #expect(try await d.status() == "Playing")
    }

    /// The lines of the clock test: one every 2 s from 1 s.
    static let clockLRC = (0..<10).map { "[00:\(String(format: "%02d", 1 + 2 * $0)).00]Line \($0 + 1)" }.joined(separator: "\n")

    @Test func lineSignalFollowsTheClockAndSeeks() async throws {
        let d = try Daemon()
        // Long enough that a loaded machine does not reach the end while the test waits.
        let wav = try d.sine("clock.wav", seconds: 90)
        try Self.clockLRC.write(to: d.media.file("clock.lrc"), atomically: true, encoding: .utf8)
        let lines = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "LyricsLineChanged"))
        // Ticks 30 s apart: any line signal in this test comes from the lyrics clock or a seek, not from a tick.
        try await d.start([wav], tickInterval: 30)
        let id = try await d.trackID()
        func received() -> [(index: Int64, start: Int64, text: String)] {
            lines.named("LyricsLineChanged").filter { $0.arguments[0].stringValue == id }.map {
                ($0.arguments[1].int64Value ?? -9, $0.arguments[2].int64Value ?? -9, $0.arguments[3].stringValue ?? "")
            }
        }
        // Lines as they start, each announced once it has started (never early), in order.
        var seen = 0
        while seen < 2 {
            // The first waits for the engine too, which beside the whole loaded suite once took 12 s to be built.
            try await d.waitFor("line \(seen + 1)", timeout: .seconds(60)) { received().filter { $0.index >= 0 }.count > seen }
            let position = try await d.position()
            let line = received().filter { $0.index >= 0 }[seen]
            let start = (1 + 2 * line.index) * 1_000_000
            #expect(line.start == start && line.text == "Line \(line.index + 1)")
            #expect(position >= start - 20_000, "line \(line.index + 1) announced at \(position) µs, before its start \(start)")
            seen += 1
        }
        let announced = received().map(\.index).filter { $0 >= 0 }
        #expect(announced == announced.sorted() && Set(announced).count == announced.count, "\(announced)")

        // A seek names the line there at once: ahead to Line 9, or back to Line 3 should a loaded machine be past Line 5
        // already (a line the clock cannot reach meanwhile, so the signal can only come from the seek).
        let before = try await d.get(Daemon.tonearm, "LyricsLine").int64Value ?? -1
        let target: Int64 = before < 5 ? 8 : 2
        lines.clear()
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64((1 + 2 * target) * 1_000_000 + 500_000)])
        try await d.waitFor("the line after the seek", timeout: .seconds(10)) { received().contains { $0.index == target } }
        #expect(received().first { $0.index == target }.map { $0.start == (1 + 2 * target) * 1_000_000 && $0.text == "Line \(target + 1)" } == true)
        // Back before the first line: none. (Not necessarily the last signal: a loaded machine may play on into Line 1
        // before the test looks.)
        lines.clear()
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(200_000)])
        try await d.waitFor("no line before the first", timeout: .seconds(10)) { received().contains { $0.index == -1 } }
        #expect(received().first { $0.index == -1 }.map { $0.start == -1 && $0.text.isEmpty } == true)

        // Paused: the clock stops with the music.
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("paused") { try await d.status() == "Paused" }
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(4_000_000)])
        try await d.waitFor("the line at 4 s while paused") { received().last?.index == 1 }
        let count = lines.named("LyricsLineChanged").count
        let later = await eventually(timeout: .seconds(3)) { lines.named("LyricsLineChanged").count > count }
        #expect(!later, "a line signal while paused")

        // A track change is announced for the new track.
        let next = try d.sine("next.wav", seconds: 5)
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(next)]), .bool(true)])
        try await d.waitFor("a signal for the new track") {
            let newID = try await d.trackID()
            return newID != id && lines.named("LyricsLineChanged").contains { $0.arguments[0].stringValue == newID && $0.arguments[1].int64Value == -1 }
        }
    }

    @Test func commandLineAndTerminalViews() async throws {
        let d = try Daemon()
        let wav = try d.sine("clock.wav", seconds: 24)
        try Self.clockLRC.write(to: d.media.file("clock.lrc"), atomically: true, encoding: .utf8)
        try await d.start([wav])
        try await d.waitFor("lyrics") { try await d.get(Daemon.tonearm, "LyricsSource").stringValue == "lrc" }
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("paused") { try await d.status() == "Paused" }
        let id = try await d.trackID()
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(5_500_000)])
        try await d.waitFor("line 3") { try await d.get(Daemon.tonearm, "LyricsLine") == .int32(2) }

        let text = try await d.tonearm("lyrics")
        #expect(text.status == 0)
        let printed = text.out.components(separatedBy: "\n")
        #expect(printed.count == 10)
        #expect(printed.first == "[0:01.00] Line 1") // the output is trimmed
        #expect(printed[1] == "  [0:03.00] Line 2")
        #expect(printed[2] == "▶ [0:05.00] Line 3")

        let json = try await d.tonearm("lyrics", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["source"] as? String == "lrc")
        #expect(object["synced"] as? Bool == true)
        #expect(object["current"] as? Int == 2)
        let jsonLines = try #require(object["lines"] as? [[String: Any]])
        #expect(jsonLines.count == 10)
        #expect(jsonLines[9]["start"] as? Double == 19.0 && jsonLines[9]["text"] as? String == "Line 10")

        // Off a terminal: one line per change, or one JSON object.
        let env = d.environment
        let tonearm = Daemon.binDirectory.appendingPathComponent("tonearm").path
        for json in [false, true] {
            let follower = try ChildProcess(tonearm, ["lyrics", "--follow"] + (json ? ["--json"] : []), environment: env, captureOutput: true)
            let printed = LineCollector(follower)
            try await d.waitFor("the line being sung first") { !printed.lines.isEmpty }
            _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(9_300_000)])
            try await d.waitFor("the line after the seek") { printed.lines.count >= 2 }
            follower.signal(SIGTERM)
            #expect(await follower.wait() == 0)
            if json {
                let objects = printed.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                #expect(objects.count == 2 && objects[1]["index"] as? Int == 4 && objects[1]["start"] as? Double == 9.0
                        && objects[1]["text"] as? String == "Line 5" && objects[1]["trackId"] as? String == id, "\(printed.lines)")
            } else {
                #expect(printed.lines.prefix(2) == ["[0:05.00] Line 3", "[0:09.00] Line 5"])
            }
            _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(5_500_000)])
            try await d.waitFor("back at line 3") { try await d.get(Daemon.tonearm, "LyricsLine") == .int32(2) }
        }

        let tmux = Tmux(socket: "tonearm-lyrics-\(getpid())")
        defer { tmux.killServer() }
        let prefix = ["env", "DBUS_SESSION_BUS_ADDRESS=\(env["DBUS_SESSION_BUS_ADDRESS"]!)", "HOME=\(env["HOME"]!)"]
        try await tmux.start(prefix + [tonearm, "lyrics", "--follow"])
        try await tmux.waitFor("highlights line 3") { screen in
            screen.contains { $0.hasPrefix("▶ Line 3") } && screen.contains { $0.hasPrefix("  Line 2") }
                && screen.contains { $0.hasPrefix("  Line 4") } && screen.first?.contains("clock") == true
        }
        // Seeking moves the highlight.
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(15_200_000)])
        try await tmux.waitFor("follows the seek") { $0.contains { $0.hasPrefix("▶ Line 8") } }
        // Playing on: the next line comes by itself. At a quarter of the speed Line 9 is sung for 8 s: at full speed its
        // 2 s went by between two looks at the screen once, on a loaded machine.
        try await d.set(Daemon.player, "Rate", .double(0.25))
        _ = try await d.call(Daemon.player, "Play")
        try await tmux.waitFor("follows playback") { $0.contains { $0.hasPrefix("▶ Line 9") } }
        try await tmux.keys("q")
        let quit = try await eventually { try await !tmux.isRunning() }
        #expect(quit, "q ends the view")

        // status --follow: the line being sung under the progress bar.
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("paused") { try await d.status() == "Paused" }
        try await d.set(Daemon.player, "Rate", .double(1))
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(7_200_000)])
        try await d.waitFor("line 4") { try await d.get(Daemon.tonearm, "LyricsLine") == .int32(3) }
        // A server of its own: the first one may still be on its way out.
        let statusTmux = Tmux(socket: "tonearm-lyrics-status-\(getpid())")
        defer { statusTmux.killServer() }
        try await statusTmux.start(prefix + [tonearm, "status", "--follow"])
        try await statusTmux.waitFor("shows line 4 under the bar") { screen in
            guard let bar = screen.firstIndex(where: { $0.contains("clock") && $0.contains("[") }) else { return false }
            return screen.indices.contains(bar + 1) && screen[bar + 1].hasPrefix("♪ Line 4")
        }
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(9_100_000)])
        try await statusTmux.waitFor("the next line after a seek") { $0.contains { $0.hasPrefix("♪ Line 5") } }

        // JSON objects carry the line too.
        let follow = try ChildProcess(tonearm, ["status", "--follow", "--json"], environment: env, captureOutput: true)
        let output = LineCollector(follow)
        try await d.waitFor("the first object") { !output.lines.isEmpty }
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(11_100_000)])
        let sawLine = await eventually(timeout: .seconds(15)) { output.lines.contains { $0.contains("\"lyric\":\"Line 6\"") } }
        follow.signal(SIGTERM)
        _ = await follow.wait()
        #expect(output.lines.first?.contains("\"lyric\":\"Line 5\"") == true, "\(output.lines)")
        #expect(sawLine, "status --follow --json: \(output.lines)")
    }
}

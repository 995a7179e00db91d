import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// Starting, stopping, crashing and coming back.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LifecycleTests {
    @Test func killDashNineThenRestartRestoresQueueTrackAndPosition() async throws {
        let d = try Daemon()
        let files = try (0..<3).map { try d.sine("t\($0).wav", seconds: 40, frequency: 300 + 100 * Double($0)) }
        try await d.start(files)
        let ids = try await d.tracks()
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        // Paused, then GoTo rather than Next: a loaded machine can take longer than the first track to get here, and
        // Next after its end would skip the second.
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        _ = try await d.call(Daemon.trackList, "GoTo", [.objectPath(ids[1])])
        try await d.waitFor("second track") { try await d.trackID() == ids[1] }
        try await d.set(Daemon.player, "Volume", .double(0.25))
        try await d.set(Daemon.player, "LoopStatus", .string("Playlist"))
        try await d.waitFor("CanSeek") { try await d.get(Daemon.player, "CanSeek") == .bool(true) }
        // A seek is saved at once, paused too (the once-a-second save runs only while playing).
        let record = d.home.file("state/tonearm/state.json.position")
        func saved() -> Int64? {
            guard let text = try? String(contentsOf: record, encoding: .utf8) else { return nil }
            let fields = text.split(whereSeparator: \.isWhitespace)
            return fields.count == 2 && fields[0] == ids[1] ? Int64(fields[1]) : nil
        }
        let paused = try await d.position()
        _ = try await d.call(Daemon.player, "Seek", [.int64(6_000_000)])
        try await d.waitFor("the seek saved while paused") { (saved() ?? 0) >= paused + 5_900_000 }
        _ = try await d.call(Daemon.player, "Play")
        // Then the position is saved each second while playing: wait for a save past the seek (however late a loaded
        // machine gets to it) and kill -9. The restart resumes between that save and where it was at the kill.
        var last: Int64 = 0
        try await d.waitFor("a save while playing") { last = saved() ?? 0; return last >= paused + 6_500_000 }
        // The clock starts before the call: the daemon reads the position somewhere between the call and its answer,
        // and a loaded machine can take a while to deliver that answer.
        let asked = ContinuousClock.now
        let before = try await d.position()
        await d.kill9()
        let untilKill = Int64((ContinuousClock.now - asked) / .microseconds(1))

        try await d.start()
        #expect(try await d.tracks() == ids)
        #expect(try await d.trackID() == ids[1])
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        try await d.waitFor("position restored") {
            let p = try await d.position()
            return p >= last && p <= before + untilKill + 100_000
        }
        #expect(try await d.get(Daemon.player, "Volume") == .double(0.25))
        #expect(try await d.get(Daemon.player, "LoopStatus") == .string("Playlist"))
        _ = try await d.call(Daemon.player, "Play")
        try await d.waitFor("plays on from there") { try await d.status() == "Playing" }
        #expect(try await d.position() > 5_000_000)
    }

    @Test func commandLineArgumentsArePathsOrURIs() async throws {
        let d = try Daemon()
        let a = try d.sine("a song.wav", seconds: 30)
        let b = try d.sine("b.wav", seconds: 30)
        try await d.start([Daemon.uri(a), b, "http://example.invalid/stream.mp3", "/nowhere/c.wav"])
        let urls = try await d.get(Daemon.trackList, "Tracks").arrayValue?.count
        #expect(urls == 3, "the two files and the stream (checked when it plays); the missing file is refused")
        #expect((try await d.metadata())["xesam:url"]?.stringValue == Daemon.uri(a), "a URI stays as it is")
        #expect(d.log.contains("/nowhere/c.wav"), "the refused one is logged")
    }

    @Test func filesOnTheCommandLineReplaceTheSavedQueue() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 30)
        let b = try d.sine("b.wav", seconds: 30)
        try await d.start([a])
        try await d.set(Daemon.player, "Shuffle", .bool(true))
        #expect(await d.terminate() == 0)
        try await d.start([b])
        let ids = try await d.tracks()
        #expect(ids.count == 1)
        #expect((try await d.metadata())["xesam:url"]?.stringValue == Daemon.uri(b))
        #expect(try await d.get(Daemon.player, "Shuffle") == .bool(true), "settings survive")
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
    }

    @Test func theOutputSwitchedToLiveIsWhereTheNextStartPlaysUntilTheConfigChanges() async throws {
        let d = try Daemon()
        let outputs = "audio-sink = \"fakesink sync=true\"\n[outputs.quiet]\nkind = \"pipeline\"\nsink = \"fakesink sync=true\"\n"
        try d.writeConfig(outputs)
        let a = try d.sine("a.wav", seconds: 30)
        try await d.start([a], sink: nil)
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "default")
        let switched = try await d.tonearm("output", "quiet")
        #expect(switched.status == 0, "\(switched)")
        #expect(await d.terminate() == 0)

        try await d.start(sink: nil)
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "quiet", "the switch was saved")
        #expect(try await d.tracks().count == 1)
        #expect(await d.terminate() == 0)

        // --audio-sink on the command line plays first, and leaves the saved choice alone.
        try await d.start()
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "default")
        #expect(await d.terminate() == 0)
        try await d.start(sink: nil)
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "quiet")
        #expect(await d.terminate() == 0)

        // A changed `output` in the config wins over the saved choice.
        try d.writeConfig("output = \"default\"\n" + outputs)
        try await d.start(sink: nil)
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "default", "the config's output was changed since")
        #expect(await d.terminate() == 0)
    }

    @Test func sigtermAndQuitSaveAndExitCleanly() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 30)
        try await d.start([a])
        #expect(await d.terminate() == 0)
        let state = d.home.file("state/tonearm/state.json")
        #expect(FileManager.default.fileExists(atPath: state.path))
        try await d.start()
        #expect(try await d.tracks().count == 1)
        _ = try await d.call("org.mpris.MediaPlayer2", "Quit")
        try await d.waitFor("gone from the bus") { !(try await d.client.nameHasOwner(Daemon.busName)) }
        #expect(await d.process?.wait() == 0)
    }

    @Test(arguments: ["SIGTERM", "Quit"]) func theGracefulWayOutSavesWhatOnlyTheEndSaves(_ how: String) async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        let b = try d.sine("b.wav", seconds: 60)
        try await d.start([a, b])
        let ids = try await d.tracks()
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        try await d.waitFor("CanSeek") { try await d.get(Daemon.player, "CanSeek") == .bool(true) }
        // A seek while paused changes only the position, which nothing but the shutdown writes.
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(ids[0]), .int64(20_000_000)])
        if how == "SIGTERM" {
            #expect(await d.terminate() == 0)
        } else {
            _ = try await d.call("org.mpris.MediaPlayer2", "Quit")
            #expect(await d.process?.wait() == 0)
        }
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)

        try await d.start()
        #expect(try await d.tracks() == ids)
        try await d.waitFor("position saved at \(how)") { abs(try await d.position() - 20_000_000) < 1_000_000 }
    }

    @Test func withNoAudioDeviceItPlaysToAClockSynchronisedNullSink() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        try await d.start([a], sink: "autoaudiosink")
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        try await d.waitFor("position moves") { try await d.position() > 200_000 }
        let started = ContinuousClock.now
        let p0 = try await d.position()
        await letTimePass(.seconds(1), because: "the wall time the media time is measured against")
        let p1 = try await d.position()
        let elapsed = ContinuousClock.now - started
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // A synchronised sink cannot run ahead of the clock (an unsynchronised one would be done in a blink).
        #expect(p1 > p0)
        #expect(Double(p1 - p0) / 1e6 < wall + 0.5, "media advanced \(p1 - p0) µs in \(wall) s")
        let notices = d.log.components(separatedBy: "no audio device").count - 1
        if notices > 0 {
            #expect(notices == 1, "the null sink is announced once:\n\(d.log)")
        } else {
            // A machine with a sound card: the real device plays; nothing to announce.
            #expect(!d.log.contains("null sink"))
        }
    }

    @Test func aSecondInstanceSaysSoAndFails() async throws {
        let d = try Daemon()
        try await d.start()
        let second = try await d.run(Daemon.binDirectory.appendingPathComponent("tonearmd").path, ["--audio-sink", "fakesink"])
        #expect(second.status != 0)
        #expect(d.process?.isRunning == true)
    }

    /// The index opens when the library's turn comes, after the first reads are answered; one that is not a database
    /// still stops the start (status 2, before any source starts) and is left as it was.
    @Test func aLibraryIndexThatCannotBeOpenedStopsTheStartAndIsLeftAlone() async throws {
        let d = try Daemon()
        let index = d.home.url.appendingPathComponent("data/tonearm/library.sqlite")
        try FileManager.default.createDirectory(at: index.deletingLastPathComponent(), withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: index)
        let run = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearmd").path, ["--audio-sink", "fakesink"],
                                       environment: d.environment)
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.contains("cannot open the library index"), "\(run.err)")
        #expect(try Data(contentsOf: index) == garbage, "the index file was changed")
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)
    }

    @Test func aBadAudioOutputIsABadArgumentAndFreesTheName() async throws {
        let d = try Daemon()
        let song = try d.sine("song.wav", seconds: 1)
        let bad = "nosuchelement ! fakesink"
        // Files to play: the engine is built at once, and the start stops.
        let run = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearmd").path, ["--audio-sink", bad, song],
                                       environment: d.environment)
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.contains("cannot build the audio output '\(bad)'"), "\(run.err)")
        // It took its name before GStreamer was set up; exiting gives it back, so a good start follows.
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)

        // Idle, nothing is built before something is to be heard: the start answers, the first Play finds the output
        // bad and stops the daemon the same way.
        // (The song it was given is kept, held paused: a start that stops loses nothing.)
        try await d.start(sink: bad)
        #expect(try await d.status() == "Paused")
        _ = try? await d.call(Daemon.player, "OpenUri", [.string(URL(fileURLWithPath: song).absoluteString)])
        #expect(await d.process?.wait() == 2)
        #expect(d.log.contains("cannot build the audio output '\(bad)'"), "\(d.log)")
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)
        try await d.start()
        #expect(try await d.status() == "Paused")
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "song")
    }

    /// `tonearm play URL` waits for the stream to be heard or to fail; a daemon that leaves the bus meanwhile (here: its
    /// audio output cannot be built, found at that first play) ends the wait with an error of its own.
    @Test func aStreamsWaitEndsWhenTheDaemonLeaves() async throws {
        let d = try Daemon()
        let bad = "nosuchelement ! fakesink"
        try await d.start(sink: bad)
        let (_, err, status) = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path,
                                                    ["play", "http://127.0.0.1:9/radio.mp3"], environment: d.environment)
        #expect(status == 3, "\(err)")
        #expect(err.contains("the Tonearm daemon left the bus before the stream was heard"), "\(err)")
        #expect(await d.process?.wait() == 2)
        #expect(d.log.contains("cannot build the audio output '\(bad)'"), "\(d.log)")
    }

    /// An idle daemon does not set GStreamer up (playbin, the sink and their plugins: a third of its memory) nor open
    /// its libraries before something asks for them: the engine is built at the first Play, once.
    @Test func anIdleStartBuildsTheEngineOnlyAtTheFirstPlay() async throws {
        let d = try Daemon()
        let first = try d.sine("first.wav", seconds: 30), second = try d.sine("second.wav", seconds: 30)
        try await d.start(["--verbose"])
        let pid = try #require(d.process?.pid)
        #expect(try await d.status() == "Stopped")
        #expect(try await d.tonearm("status").status == 0)
        // Not even GStreamer's libraries are opened before something needs them (the stubs of CGStreamer).
        #expect(!Self.mappedFiles(pid).contains("libgstreamer-1.0"), "GStreamer's library is mapped while idle")
        #expect(try await d.get("org.mpris.MediaPlayer2", "SupportedMimeTypes").arrayValue?.isEmpty == false)
        #expect(Self.mappedFiles(pid).contains("libgstreamer-1.0"), "the registry was read without GStreamer")
        #expect(Self.enginesBuilt(d) == 0)
        #expect(!Self.mappedFiles(pid).contains("libgstplayback"), "playbin's plugin is loaded while idle")

        _ = try await d.call(Daemon.player, "OpenUri", [.string(URL(fileURLWithPath: first).absoluteString)])
        try await d.waitFor("playing") { try await d.position() > 100_000 }
        #expect(Self.mappedFiles(pid).contains("libgstplayback"))
        _ = try await d.call(Daemon.player, "OpenUri", [.string(URL(fileURLWithPath: second).absoluteString)])
        try await d.waitFor("the second playing") { try await d.metadata()["xesam:title"]?.stringValue == "second" }
        #expect(Self.enginesBuilt(d) == 1)
    }

    /// Without GStreamer's libraries (a name that does not exist stands for them), the doctor says so and still checks
    /// the rest, and a first GStreamer call ends the process with the loader's reason and status 127, not a crash.
    @Test func withoutGStreamerTheDoctorSaysSoAndAFirstCallEndsWithTheReason() async throws {
        let d = try Daemon()
        d.extraEnvironment["TONEARM_GSTREAMER_LIBRARY"] = "libgstreamer-absent-1.0.so.0"
        let tonearmd = Daemon.binDirectory.appendingPathComponent("tonearmd").path
        let doctor = try await d.run(tonearmd, ["--doctor"])
        let checks = try JSONSerialization.jsonObject(with: Data(doctor.out.utf8)) as? [[String: Any]] ?? []
        let gstreamer = try #require(checks.first { $0["name"] as? String == "gstreamer" }, "\(doctor.out)")
        #expect(gstreamer["verdict"] as? String == "failure")
        #expect((gstreamer["detail"] as? String ?? "").contains("libgstreamer-absent-1.0.so.0"), "\(gstreamer)")
        #expect(checks.contains { $0["name"] as? String == "web" }, "the other checks were not made: \(doctor.out)")

        let song = try d.sine("song.wav", seconds: 1)
        let (_, err, status) = try await runProcess(tonearmd, ["--measure-loudness", song], environment: d.environment)
        #expect(status == 127, "\(err)")
        #expect(err.contains("cannot load GStreamer: libgstreamer-absent-1.0.so.0"), "\(err)")
        #expect(FileManager.default.fileExists(atPath: song))
    }

    /// A sink that writes to a FIFO whose reader went away blocks in open(), holding the thread that changes the
    /// pipeline's state; SIGTERM still ends the daemon, once its shutdown deadline has passed.
    @Test func aShutdownStuckOnABlockedOutputStillEnds() async throws {
        let d = try Daemon()
        d.extraEnvironment["TONEARM_SHUTDOWN_DEADLINE"] = "2"
        let song = try d.sine("song.wav", seconds: 30)
        let fifo = d.media.file("out.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let reader = try ChildProcess("/bin/cat", [fifo.path], captureOutput: false, outputFile: "/dev/null")
        // Not waiting for the ready line: the player may be held by the blocked state change before it.
        try await d.start([song], sink: "wavenc ! filesink location=\(fifo.path) sync=true", ready: false)
        // The reader leaves by itself when the pipeline closes the FIFO once (as it sets its sink up), and the open
        // after blocks; a reader still there is sent away.
        if await reader.wait(timeout: .seconds(20)) == nil {
            reader.signal(SIGTERM)
            _ = await reader.wait()
        }
        let pid = try #require(d.process?.pid)
        try await d.waitFor("a thread of the daemon blocked opening the FIFO") { Self.blockedOpeningAFIFO(pid) }
        #expect(await d.terminate() == 3, "\(d.log)")
        #expect(d.log.contains("the shutdown did not end within 2.0 seconds"), "\(d.log)")
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)
    }

    /// Whether a thread of `pid` waits in the kernel for a FIFO's other end (Linux's `wait_for_partner`).
    static func blockedOpeningAFIFO(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { procText("/proc/\(pid)/task/\($0)/wchan") == "wait_for_partner" }
    }

    static func enginesBuilt(_ d: Daemon) -> Int {
        d.log.components(separatedBy: "\n").filter { $0.contains("building the audio engine") }.count
    }

    /// The files a process has mapped (its /proc maps).
    static func mappedFiles(_ pid: pid_t) -> String { procText("/proc/\(pid)/maps") }

    /// A /proc file read to its end: such a file says its size is 0, and a read by its size gets only a part ("" when
    /// it cannot be read).
    static func procText(_ path: String) -> String {
        guard let file = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? file.close() }
        return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self)
    }

    @Test(arguments: [
        ("[plugins.library]\nscan-on-start = \"yes\"\n", "[plugins.library] scan-on-start must be true or false, not \"yes\""),
        ("[plugins.library]\nfolder = \"/music\"\n", "[plugins.library] has no key \"folder\""),
        ("[plugins.midi]\nsoundfont = \"fonts/GM.sf2\"\n", "[plugins.midi] soundfont must be an absolute path"),
        ("[plugins.shares]\non-receive = \"later\"\n", "[plugins.shares] on-receive must be one of"),
        ("[web]\nport = -1\n", "[web] port must be a whole number from 0 to 65535, not -1"),
        ("[plugins.streams]\nreconnect-attempts = 1000\n", "[plugins.streams] reconnect-attempts must be a whole number from 0 to 100, not 1000"),
        ("[plugins.localsend]\nenabled = \"yes\"\n", "[plugins.localsend] enabled must be true or false, not \"yes\""),
        ("[plugins.upnp]\nqueue = \"append\"\n", "[plugins.upnp] queue must be one of \"replace\", \"next\", not \"append\""),
        ("[plugins.upnp]\nuuid = \"not-a-uuid\"\n", "[plugins.upnp] uuid must be a UUID"),
        ("[playback.replaygain]\npreamp = 40\n", "[playback.replaygain] preamp must be a number from -30 to 30, not 40"),
        ("[outputs.kitchen]\nkind = \"snapcast-tcp\"\nport = 0\n", "[outputs.kitchen] (kind \"snapcast-tcp\") port must be a whole number from 1 to 65535, not 0"),
        ("tick-interval = \"fast\"\n", "tick-interval must be a number from 0.01 to 60, not \"fast\""),
        ("output-retries = -1\n", "output-retries must be a whole number from 0 to 100000, not -1"),
        ("volume = 3\n", "has no key \"volume\""),
    ])
    func aBadSettingStopsTheStartAndConfigAndDoctorSaySoAlike(_ config: String, _ message: String) async throws {
        let d = try Daemon()
        try d.writeConfig(config)
        let run = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearmd").path, ["--audio-sink", "fakesink"],
                                       environment: d.environment)
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.contains(message), "\(run.err)")
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)
        let shown = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, ["config"], environment: d.environment)
        #expect(shown.status != 0)
        #expect(shown.err.contains(message), "\(shown.err)")
        let doctor = try await d.tonearm("doctor", "--json")
        #expect(doctor.out.contains(message.replacingOccurrences(of: "\"", with: "\\\"")), "\(doctor.out)")
    }

    @Test func withNoSessionBusItStartsAPrivateOne() async throws {
        let home = TemporaryDirectory()
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        env["HOME"] = home.url.path
        env["XDG_STATE_HOME"] = home.file("state").path
        let p = try ChildProcess(Daemon.binDirectory.appendingPathComponent("tonearmd").path, ["--audio-sink", "fakesink sync=true"], environment: env)
        let lines = LineCollector(p)
        _ = await eventually { !lines.lines.isEmpty }
        let first = lines.lines.first ?? ""
        #expect(first.hasPrefix("DBUS_SESSION_BUS_ADDRESS="))
        let address = String(first.dropFirst("DBUS_SESSION_BUS_ADDRESS=".count))
        let client = try DBusConnection.connect(address: address)
        defer { client.close() }
        let up = try await eventually { try await client.nameHasOwner(Daemon.busName) }
        #expect(up)
        let status = try await client.getProperty(destination: Daemon.busName, path: Daemon.path, interface: Daemon.player, name: "PlaybackStatus")
        #expect(status == .string("Stopped"))
        p.signal(SIGTERM)
        #expect(await p.wait() == 0)
    }
}

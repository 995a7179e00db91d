import DBus
import DaemonHarness
import Foundation
import Synchronization
import TestSupport
import Testing

/// A start answers at once: reads from the restored state or the command line's files, commands taken in order and
/// carried out once the engine is ready. The engine is held back on purpose (`TONEARM_ENGINE_GATE`: it is built once
/// that file exists), so "before the engine is ready" is a state the test controls, not a race.
@Suite(.serialized, .timeLimit(.minutes(3))) struct StartTests {
    @Test func aSlowEngineStartAnswersFromTheRestoredStateAndPlaysOnceReady() async throws {
        let d = try Daemon()
        let id = try await Self.savePaused(d, at: 12_000_000)

        let gate = d.home.file("engine-gate")
        d.extraEnvironment["TONEARM_ENGINE_GATE"] = gate.path
        // The log goes on from the first start: count what this start says.
        let readyBefore = Self.enginesReady(d)
        try await d.start()
        // Every read is answered while the engine is not built: the saved queue, track and position, paused.
        #expect(try await d.status() == "Paused")
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "restored")
        #expect(try await d.tracks().count == 1)
        #expect(try await d.position() == 12_000_000)
        #expect(try await d.get(Daemon.player, "CanPlay") == .bool(true))
        // A command is taken at once: Play answers, and says Playing; the position waits for the engine.
        _ = try await d.call(Daemon.player, "Play")
        #expect(try await d.status() == "Playing")
        #expect(try await d.position() == 12_000_000)
        #expect(Self.enginesReady(d) == readyBefore, "the engine was held back, yet it says it is ready")

        // Carried out once ready: it plays from the restored position (no further than the time since the engine was
        // let go).
        let asked = ContinuousClock.now
        try Data().write(to: gate)
        try await d.waitFor("the engine") { Self.enginesReady(d) == readyBefore + 1 }
        try await d.waitFor("playing on from 12 s") { try await d.position() > 12_200_000 }
        let position = try await d.position()
        let since = asked.duration(to: .now)
        #expect(position < 12_000_000 + Int64(since.components.seconds + 1) * 1_000_000 + 200_000, "from 12 s, not from the start: \(position)")
        #expect(try await d.status() == "Playing")
        #expect(try await d.trackID() == id)
    }

    @Test func aStartWithBrokenFilesFirstAnswersAtOnceAndThenPlaysTheGoodOne() async throws {
        let d = try Daemon()
        let noise = try d.garbage("noise.ogg")
        let empty = d.media.file("empty.ogg")
        try Data().write(to: empty)
        let good = try d.sine("good.wav", seconds: 30)
        let gate = d.home.file("engine-gate")
        d.extraEnvironment["TONEARM_ENGINE_GATE"] = gate.path
        try await d.start([noise, empty.path, good])
        let failures = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        // Answered before the engine exists: what the command line asked, playing.
        #expect(try await d.status() == "Playing")
        #expect(try await !d.tracks().isEmpty)
        #expect(Self.enginesReady(d) == 0)
        try Data().write(to: gate)
        try await d.waitFor("the good song playing") {
            let title = try await d.metadata()["xesam:title"]?.stringValue
            let status = try await d.status()
            return title == "good" && status == "Playing"
        }
        try await d.waitFor("its position moving") { try await d.position() > 100_000 }
        // Whatever was queued of the broken files was reported, not played.
        for signal in failures.signals {
            let uri = signal.arguments.dropFirst().first?.stringValue ?? ""
            #expect(uri.hasSuffix("noise.ogg") || uri.hasSuffix("empty.ogg"), "\(signal)")
        }
        #expect(d.process?.isRunning == true)
    }

    @Test func aStartSkipsBrokenFilesByTheirBytesBeforeTheEngineIsBuiltButPlaysASongUnderALyingName() async throws {
        let d = try Daemon()
        let noise = try d.garbage("noise.ogg")
        let empty = d.media.file("empty.flac")
        try Data().write(to: empty)
        // A WAV named .mp3: its tags cannot be read by its name, but it is a song.
        let lying = d.media.file("lying.mp3")
        try FileManager.default.moveItem(atPath: try d.sine("lying.wav", seconds: 30), toPath: lying.path)
        let gate = d.home.file("engine-gate")
        d.extraEnvironment["TONEARM_ENGINE_GATE"] = gate.path
        let failures = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start([noise, empty.path, lying.path])
        // Both broken files are told from their bytes while the engine is held back, and the song named after them.
        try await d.waitFor("both broken files reported") { failures.signals.count >= 2 }
        #expect(Self.enginesReady(d) == 0, "the engine was held back, yet it says it is ready")
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "lying")
        #expect(try await d.status() == "Playing")
        let reported = failures.signals.compactMap { $0.arguments.dropFirst().first?.stringValue }
        #expect(reported == [URL(fileURLWithPath: noise).absoluteString, empty.absoluteString], "\(reported)")

        try Data().write(to: gate)
        try await d.waitFor("the song under a lying name playing") {
            let title = try await d.metadata()["xesam:title"]?.stringValue
            let status = try await d.status(), position = try await d.position()
            return title == "lying" && status == "Playing" && position > 100_000
        }
        // The engine never got to the broken files: each was reported once.
        #expect(failures.signals.count == 2, "\(failures.signals)")
        #expect(d.process?.isRunning == true)
    }

    @Test func anOutputChosenBeforeTheEngineIsReadyIsAnsweredAtOnceAndPlayedInto() async throws {
        let d = try Daemon()
        let chosen = d.media.file("chosen.wav"), first = d.media.file("first.wav")
        try d.writeConfig("""
            [outputs.file]
            kind = "pipeline"
            sink = "wavenc ! filesink location=\(chosen.path)"

            """)
        let song = try d.sine("song.wav", seconds: 1.5)
        let gate = d.home.file("engine-gate")
        d.extraEnvironment["TONEARM_ENGINE_GATE"] = gate.path
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([song], sink: "wavenc ! filesink location=\(first.path)")
        // The switch is taken with no engine to open it yet, and every face reads it at once.
        try await d.set(Daemon.tonearm, "Output", .string("file"))
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "file")
        #expect(try await d.tonearm("output").out.contains("file"))
        #expect(Self.enginesReady(d) == 0)
        try Data().write(to: gate)
        try await d.waitForTheEnd("the song played, then Stopped", after: changes)
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "file")
        _ = await d.terminate()
        // All of it went to the output chosen, nothing to the one the engine was built with.
        let rendered = try d.rendering(chosen)
        #expect(abs(rendered.seconds - 1.5) < 0.05, "rendered \(rendered.seconds) s")
        let size = (try? FileManager.default.attributesOfItem(atPath: first.path)[.size] as? Int) ?? 0
        #expect(size <= 44, "the first output got \(size) bytes")
    }

    @Test func aReadOfTheMIMETypesWaitsForGStreamerAndHoldsNoOtherCall() async throws {
        let d = try Daemon()
        // GStreamer held back on purpose: a registry to build (as after an install or an update) whose plugin
        // scanner waits for a file.
        let gate = d.home.file("scanner-gate"), scanner = d.home.file("slow-scanner")
        try "#!/bin/sh\nwhile [ ! -e '\(gate.path)' ]; do sleep 0.02; done\nexec \(Self.pluginScanner) \"$@\"\n"
            .write(to: scanner, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scanner.path)
        d.extraEnvironment["GST_REGISTRY"] = d.home.file("registry.bin").path
        d.extraEnvironment["GST_PLUGIN_SCANNER"] = scanner.path
        try await d.start()
        // A panel widget reads the root's properties as soon as the name appears: they include the MIME types, which
        // come from GStreamer's registry.
        final class Flag: Sendable { let done = Mutex(false) }
        let flag = Flag()
        let root = Task {
            defer { flag.done.withLock { $0 = true } }
            return try await d.client.getAllProperties(destination: Daemon.busName, path: Daemon.path, interface: "org.mpris.MediaPlayer2")
        }
        // Calls after it are carried out and answered meanwhile, in their own order.
        try await d.set(Daemon.player, "Volume", .double(0.5))
        #expect(try await d.get(Daemon.player, "Volume") == .double(0.5))
        _ = try await d.call(Daemon.player, "Play")
        #expect(try await d.get(Daemon.tonearm, "Output").stringValue == "default")
        #expect(flag.done.withLock { $0 } == false, "the root's properties could not have been read yet")
        #expect(Self.enginesReady(d) == 0)
        try Data().write(to: gate)
        let properties = try await root.value
        let types = properties["SupportedMimeTypes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(types.contains("audio/x-wav") && types.contains("application/ogg"), "\(types)")
        #expect(properties["Identity"]?.stringValue == "Tonearm")
        // The registry was read for them; the engine is not built, with nothing to be heard.
        #expect(Self.enginesReady(d) == 0)
    }

    /// GStreamer's plugin scanner, as Debian installs it.
    static let pluginScanner = "/usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner"

    /// The sources (library, shares, MIDI, LocalSend) start after the player is restored; nothing waits for them.
    @Test func whileTheSourcesStartEveryCallIsAnsweredAndCommandsAreCarriedOutInOrder() async throws {
        let d = try Daemon()
        let id = try await Self.savePaused(d, at: 7_000_000, volume: 0.5)

        // The sources are held back, so the daemon has not said it is ready.
        let gate = d.home.file("sources-gate")
        d.extraEnvironment["TONEARM_SOURCES_GATE"] = gate.path
        let readyBefore = Daemon.readyLines(in: d.log)
        try await d.start(ready: false)
        // Reads are answered from the saved state.
        #expect(try await d.status() == "Paused")
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "restored")
        #expect(try await d.tracks().count == 1)
        #expect(try await d.position() == 7_000_000)
        #expect(try await d.get(Daemon.player, "Volume") == .double(0.5))
        #expect(try await d.get("org.mpris.MediaPlayer2", "Identity").stringValue == "Tonearm")
        // Commands are taken and carried out, in order: a client's read right after its command sees it, over the
        // bus and over the command line.
        let other = try DBusConnection.connect(address: d.bus.address)
        defer { other.close() }
        _ = try await other.call(destination: Daemon.busName, path: "/org/mpris/MediaPlayer2", interface: Daemon.player, member: "Play")
        #expect(try await other.getProperty(destination: Daemon.busName, path: "/org/mpris/MediaPlayer2", interface: Daemon.player,
                                            name: "PlaybackStatus").stringValue == "Playing")
        try await d.waitFor("playing on from 7 s") { try await d.position() > 7_100_000 }
        _ = try await d.call(Daemon.player, "Pause")
        let status = try await d.tonearm("status", "--json")
        #expect((try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any])?["status"] as? String == "Paused",
                "\(status.out)")
        #expect(Daemon.readyLines(in: d.log) == readyBefore, "the sources are still held back")

        try Data().write(to: gate)
        try await d.waitFor("the ready line") { Daemon.readyLines(in: d.log) == readyBefore + 1 }
        #expect(try await d.status() == "Paused")
        #expect(try await d.trackID() == id)
        #expect(try await d.tracks().count == 1, "the queue restored once")
    }

    /// Logging out while a source still starts (held back here by the test's gate) must not wait for that start: the
    /// parts still waiting for their turn never start, the ones started stop in order, and the state is saved.
    @Test func aShutdownWhileTheSourcesStartEndsAtOnceAndKeepsTheState() async throws {
        let d = try Daemon()
        let id = try await Self.savePaused(d, at: 7_000_000)
        let gate = d.home.file("sources-gate")
        d.extraEnvironment["TONEARM_SOURCES_GATE"] = gate.path
        try await d.start(["--verbose"], ready: false)
        #expect(try await d.status() == "Paused", "the saved state is restored while the sources start")
        let process = try #require(d.process)
        process.signal(SIGTERM)
        // A bound for a loaded machine: before, the daemon waited for the gate for ever.
        let code = await process.wait(timeout: .seconds(120))
        #expect(code == 0, "SIGTERM while starting ends the daemon cleanly\n\(d.log.suffix(3000))")
        if code == nil { await d.kill9() }
        let log = d.log.components(separatedBy: "\n")
        #expect(log.contains { $0.hasSuffix("not started bus: shutting down") }, "the bus face never started")
        #expect(log.contains { $0.hasSuffix("stopped player") }, "the player stopped (and saved)")
        #expect(log.filter { $0.contains("ready on the session bus") }.count == 1, "only the first run got ready")

        // The next start finds the state as it was.
        d.extraEnvironment["TONEARM_SOURCES_GATE"] = nil
        try await d.start()
        #expect(try await d.trackID() == id)
        #expect(try await d.status() == "Paused")
        #expect(try await d.position() == 7_000_000)
    }

    /// Plays a long track, pauses it at `position` µs (and sets `volume`), waits until that is saved and stops the
    /// daemon: the state the next start restores. Returns the track's id.
    static func savePaused(_ d: Daemon, at position: Int64, volume: Double? = nil) async throws -> String {
        // Five minutes: under the whole loaded suite a first poll once came after a 40 s track had played through.
        let file = try await d.longSine("restored.wav", seconds: 300)
        try await d.start([file])
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let id = try await d.trackID()
        _ = try await d.call(Daemon.player, "Pause")
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(position)])
        if let volume { try await d.set(Daemon.player, "Volume", .double(volume)) }
        try await d.waitFor("the seek saved") {
            let text = (try? String(contentsOf: d.home.file("state/tonearm/state.json.position"), encoding: .utf8)) ?? ""
            return text.contains(" \(position)")
        }
        #expect(await d.terminate() == 0)
        return id
    }

    /// How many times the daemon's log says its audio engine became ready.
    static func enginesReady(_ d: Daemon) -> Int {
        d.log.components(separatedBy: "\n").filter { $0.contains("audio engine ready") }.count
    }
}

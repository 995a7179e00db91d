import DBus
import Foundation
import DaemonHarness
import RawPaths
import TestSupport
import Testing

/// `tonearm`, the first cut of the command line, against the real daemon.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CommandLineTests {
    @Test func playStartsTheDaemonAndTheVerbsWork() async throws {
        let d = try Daemon()
        let a = try d.sine("uno.wav", seconds: 40)
        let b = try d.sine("dos.wav", seconds: 40)

        #expect(try await d.tonearm("play", a, b).status == 0)
        try await d.waitFor("daemon started by tonearm play") { try await d.client.nameHasOwner(Daemon.busName) }
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        #expect(try await d.tracks().count == 2)

        #expect(try await d.tonearm("pause").status == 0)
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        #expect(try await d.tonearm("toggle").status == 0)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        #expect(try await d.tonearm("next").status == 0)
        try await d.waitFor("dos") { (try await d.metadata())["xesam:title"]?.stringValue == "dos" }
        #expect(try await d.tonearm("prev").status == 0)
        try await d.waitFor("uno") { (try await d.metadata())["xesam:title"]?.stringValue == "uno" }
        #expect(try await d.tonearm("seek", "7").status == 0)
        try await d.waitFor("at 7 s") { try await d.position() >= 6_900_000 }
        #expect(try await d.tonearm("seek", "+3").status == 0)
        try await d.waitFor("at 10 s") { try await d.position() >= 9_900_000 }
        #expect(try await d.tonearm("volume", "40").status == 0)
        try await d.waitFor("volume 0.4") { (try await d.get(Daemon.player, "Volume").doubleValue ?? 0) == 0.4 }

        let json = try await d.tonearm("status", "--json")
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect(object?["status"] as? String == "Playing")
        #expect(object?["title"] as? String == "uno")
        #expect(object?["trackId"] as? String == (try await d.trackID()))
        #expect((object?["length"] as? Double).map { abs($0 - 40) < 0.1 } == true)
        #expect((object?["volume"] as? Double) == 0.4)

        #expect(try await d.tonearm("stop").status == 0)
        try await d.waitFor("Stopped") { try await d.status() == "Stopped" }
        #expect(try await d.tonearm("seek", "banana").status == 2)
        #expect(try await d.tonearm("play", "/no/such/file.ogg").status == 2)
        _ = try await d.call("org.mpris.MediaPlayer2", "Quit")
        try await d.waitFor("the daemon tonearm started has quit") { !(try await d.client.nameHasOwner(Daemon.busName)) }
    }

    /// A file whose name is not UTF-8 (a Latin-1 `é`, as a shell completes it) plays from `tonearm play`, relative
    /// to the working directory: Swift's own arguments hold U+FFFD there, the URI must carry the byte (`%E9`).
    @Test func aFileNamedInLatin1PlaysFromTheCommandLine() async throws {
        let d = try Daemon()
        let (folder, file) = try await Self.latin1WAV(in: d)
        defer { Self.remove(file) }
        try await d.start()
        let tonearm = Daemon.binDirectory.appendingPathComponent("tonearm").path
        let played = try await d.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" play \"$(printf 'caf\\351.wav')\"", tonearm, folder])
        #expect(played.status == 0, "\(played.out)")
        let uri = "file://\(folder)/caf%E9.wav" // the folder's name is plain ASCII
        try await d.waitFor("caf%E9.wav playing") {
            let url = try await d.metadata()["xesam:url"]?.stringValue
            let status = try await d.status()
            return url == uri && status == "Playing"
        }
        let missing = try await d.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" play \"$(printf 'gone\\351.wav')\"", tonearm, folder])
        #expect(missing.status != 0)
    }

    /// The daemon's own file arguments too: Swift's `CommandLine.arguments` holds U+FFFD where a Latin-1 name has its
    /// byte, and a file named so played nothing.
    @Test func aFileNamedInLatin1PlaysFromTheDaemonsCommandLine() async throws {
        let d = try Daemon()
        let (folder, file) = try await Self.latin1WAV(in: d)
        defer { Self.remove(file) }
        // A shell names the file, relative to the daemon's working directory, after the harness's own arguments.
        let launcher = d.home.file("tonearmd-with-latin1-file")
        let tonearmd = Daemon.binDirectory.appendingPathComponent("tonearmd").path
        try "#!/bin/sh\ncd \"\(folder)\" && exec \"\(tonearmd)\" \"$@\" \"$(printf 'caf\\351.wav')\"\n"
            .write(to: launcher, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: launcher.path)
        d.daemonExecutable = launcher.path
        try await d.start()
        let uri = "file://\(folder)/caf%E9.wav" // the folder's name is plain ASCII
        try await d.waitFor("caf%E9.wav playing") {
            let url = try await d.metadata()["xesam:url"]?.stringValue
            let status = try await d.status()
            return url == uri && status == "Playing"
        }
    }

    /// `caf\xE9.wav` (30 s) in the daemon's media folder, named by the shell: no Swift String can name it. The folder's
    /// path (plain ASCII) and the file's.
    static func latin1WAV(in d: Daemon) async throws -> (folder: String, file: RawPath) {
        try d.sine("made.wav", seconds: 30)
        let folder = d.media.url.path
        let renamed = try await d.run("/bin/sh", ["-c", "mv \"$0/made.wav\" \"$0/$(printf 'caf\\351.wav')\"", folder])
        try #require(renamed.status == 0, "\(renamed.out)")
        return (folder, RawPath(bytes: Array("\(folder)/caf".utf8) + [0xE9] + Array(".wav".utf8)))
    }

    /// Foundation cannot remove what it cannot name.
    static func remove(_ file: RawPath) { _ = file.withCString { unlink($0) } }

    @Test func statusFollowPrintsALineForEachTick() async throws {
        let d = try Daemon()
        let a = try d.sine("follow.wav", seconds: 40)
        try await d.start([a], tickInterval: 0.25)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let follow = try ChildProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, ["status", "--follow"], environment: d.environment)
        let lines = LineCollector(follow)
        try await d.waitFor("several progress lines") { lines.lines.count >= 4 }
        #expect(lines.lines.contains { $0.contains("follow") && $0.contains("0:40") }, "\(lines.lines)")
    }

    @Test func exitCodesForNoBusAndNoDaemon() async throws {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        let tonearm = Daemon.binDirectory.appendingPathComponent("tonearm")
        let noBus = try await runProcess(tonearm.path, ["pause"], environment: env)
        #expect(noBus.status == 3)
        #expect(noBus.err.contains("bus"), "\(noBus.err)")

        let d = try Daemon()
        let noDaemon = try await d.tonearm("pause")
        #expect(noDaemon.status == 3, "pause does not start a daemon; it says none is running")
        #expect(try await d.client.nameHasOwner(Daemon.busName) == false)
    }
}

import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 6: browsing and exporting stay inside their roots; OpenUri refuses what it cannot play; inbox files
/// named to attack land safely.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ConfinementTests {
    @Test func pathsStayInsideTheirRootsAndHostileNamesLandSafely() async throws {
        let d = try Daemon()
        let music = d.home.url.appendingPathComponent("Music")
        let midi = music.appendingPathComponent("MIDI")
        let inbox = music.appendingPathComponent("Inbox")
        try FileManager.default.createDirectory(at: midi, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let outside = d.media.url.appendingPathComponent("secret")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try SMFBytes(format: 0, division: 96, tracks: [Ev.end(96)]).write(to: outside.appendingPathComponent("x.mid"))
        try FileManager.default.createSymbolicLink(at: midi.appendingPathComponent("link"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(at: music.appendingPathComponent("away"), withDestinationURL: outside)
        let config = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.shares]\nsettle-seconds = 0.2\non-receive = \"add\"\n".write(to: config, atomically: true, encoding: .utf8)
        let shares = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.tonearm.Shares1"))
        try await d.start()

        var tried = 0, refused = 0
        let escapes = ["..", "../..", "/", "/etc", "link", "link/x.mid", "a/../../..", "./../x", "\u{0}", "away", "away/x.mid", "%2e%2e",
                       String(repeating: "../", count: 500), String(repeating: "a/", count: 2000)]
        for root in ["midi", "library"] {
            for path in escapes {
                for method in ["List", "Choose", "Play"] {
                    tried += 1
                    do {
                        _ = try await d.call("org.tonearm.Browser1", method, [.string(root), .string(path)])
                        Issue.record("\(method)(\(root), \(path.prefix(40))) was accepted")
                    } catch let error as DBusError {
                        refused += 1
                        // A NUL cannot even be sent: the D-Bus library refuses it before the daemon sees it.
                        #expect(error.name.hasPrefix("org.tonearm.Error.") || (path.contains("\u{0}") && error.name.hasSuffix("InvalidArgs")),
                                "\(method) \(path.prefix(40)): \(error.name)")
                    }
                }
            }
        }
        // Export: relative folders, missing folders, and file names are never written outside the folder asked for.
        let song = try d.sine("song.wav", seconds: 1)
        for folder in ["relative", "../", "/nonexistent", "", "/proc/self"] {
            tried += 1
            do {
                _ = try await d.call("org.tonearm.Shares1", "Export", [.string(song), .string(folder), .string("")])
                Issue.record("Export to \(folder) was accepted")
            } catch is DBusError { refused += 1 }
        }
        // OpenUri refuses schemes it cannot play and hostile URIs.
        for uri in ["javascript:alert(1)", "file:///etc/passwd", "file:///dev/zero", "ftp2://x", "", "file://", "data:audio/wav;base64,AAAA",
                    "file:///" + String(repeating: "a", count: 5000)] {
            tried += 1
            do {
                _ = try await d.call(Daemon.player, "OpenUri", [.string(uri)])
                Issue.record("OpenUri(\(uri.prefix(40))) was accepted")
            } catch let error as DBusError {
                refused += 1
                #expect(error.name.hasPrefix("org.tonearm.Error."), "\(uri.prefix(40)): \(error.name)")
            }
        }
        // Inbox files named to attack: control characters, 250-byte names, names that look like paths or options.
        let hostile = ["-rf.wav", "a\u{1}b\u{7f}.wav", String(repeating: "ü", count: 120) + ".wav", "$(reboot).wav", "`x`.wav", "--help.wav",
                       "x..\\..\\y.wav", " .wav"]
        let wav = WAV.sine(seconds: 0.3, sampleRate: 8000, channels: 1).data()
        for (i, name) in hostile.enumerated() {
            var bytes = wav
            bytes.append(UInt8(i)) // distinct contents
            try bytes.write(to: inbox.appendingPathComponent(name))
        }
        // A leading dot is a partial or hidden name: it stays where it is, untouched.
        try wav.write(to: inbox.appendingPathComponent("..wav"))
        let received = music.appendingPathComponent("Received")
        try await d.waitFor("all taken", timeout: .seconds(60)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []) == ["..wav"]
        }
        // Each file is announced once its import is over.
        try await d.waitFor("all announced", timeout: .seconds(60)) {
            shares.named("Received").count + shares.named("Rejected").count >= hostile.count
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: received.path)
        #expect(stored.count == hostile.count, "\(stored)")
        #expect(stored.allSatisfy { !$0.contains("/") && !$0.hasPrefix(".") && $0.utf8.count <= 255 && !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        #expect(!FileManager.default.fileExists(atPath: music.appendingPathComponent("x.wav").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["x.mid"], "nothing written outside")
        #expect(d.process?.isRunning == true)

        Reliability.report(6, "Confinement", tried: [
            "\(tried) escapes: Browser1 List/Choose/Play on both roots with \"..\", absolute paths, symlinks out of the root, NUL, 1,500-level \"../\"; "
                + "Export into relative, missing and special folders; OpenUri with javascript:, data:, /etc/passwd, /dev/zero, empty and 5,000-byte URIs",
            "\(hostile.count) inbox files named to attack: control characters, 120 two-byte characters, shell syntax, option-like and path-like names",
        ], held: [
            "\(refused) of \(tried) refused with an org.tonearm.Error.* (or standard) D-Bus error; nothing outside a root was listed, remembered or played",
            "every hostile inbox file landed in Received under a safe name (no slash, no control character, not hidden, at most 255 bytes); nothing was written outside",
        ], figures: [("escapes tried", "\(tried)"), ("refused", "\(refused)"), ("hostile names received safely", "\(stored.count)/\(hostile.count)")])
    }
}

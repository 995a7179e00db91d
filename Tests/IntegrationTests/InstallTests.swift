import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// `make install` into a temporary prefix, then the desktop's way in: D-Bus activation and media keys.
@Suite(.serialized, .timeLimit(.minutes(3))) struct InstallTests {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static let installed = [
        "bin/tonearmd", "bin/tonearm", "share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service",
        "share/systemd/user/tonearmd.service", "share/applications/tonearm.desktop",
        "share/bash-completion/completions/tonearm", "share/zsh/site-functions/_tonearm",
        "share/fish/vendor_completions.d/tonearm.fish", "share/man/man1/tonearm.1", "share/man/man1/tonearmd.1",
    ]

    static func make(_ target: String, prefix: URL) async throws {
        let (out, err, status) = try await runProcess("/usr/bin/make", [
            "-C", packageRoot.path, target, "PREFIX=\(prefix.path)", "SKIP_BUILD=1", "BUILD=\(Daemon.binDirectory.path)",
        ])
        try #require(status == 0, "make \(target) failed:\n\(out.suffix(2000))\n\(err.suffix(2000))")
    }

    /// dbus-send, as a desktop shell's media-key handler sends a Player method to the MPRIS name.
    static func mediaKey(_ method: String, bus: String, expecting: String? = nil) async throws -> Int32 {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
        let result = try await runProcess("/usr/bin/dbus-send", ["--session", "--type=method_call", "--print-reply",
                                                            "--dest=org.mpris.MediaPlayer2.tonearm", "/org/mpris/MediaPlayer2",
                                                            "org.mpris.MediaPlayer2.Player." + method], environment: env)
        if let expecting { return result.err.contains(expecting) ? 0 : 1 }
        if result.status != 0 { Issue.record("dbus-send \(method): \(result.err)") }
        return result.status
    }

    @Test func installedTheDaemonStartsOnDemandAndMediaKeysDriveIt() async throws {
        let prefix = TemporaryDirectory("tonearm-prefix")
        let home = TemporaryDirectory("tonearm-home")
        try await Self.make("install", prefix: prefix.url)
        for file in Self.installed {
            #expect(FileManager.default.fileExists(atPath: prefix.file(file).path), "\(file) is not installed")
        }
        let service = try String(contentsOf: prefix.file("share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service"), encoding: .utf8)
        #expect(service.contains("Exec=\(prefix.file("bin/tonearmd").path)\n"))
        #expect(try String(contentsOf: prefix.file("share/applications/tonearm.desktop"), encoding: .utf8)
            .contains("Exec=\(prefix.file("bin/tonearm").path) open %U"))

        let bus = try PrivateBus.start(serviceDirectories: [prefix.file("share/dbus-1/services").path])
        defer { bus.stop() }
        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close() }
        // What a session manager does: the environment activated services get.
        let env: [String: String] = ["HOME": home.url.path, "XDG_CONFIG_HOME": home.file("config").path, "XDG_DATA_HOME": home.file("data").path,
                                     "XDG_STATE_HOME": home.file("state").path, "XDG_CACHE_HOME": home.file("cache").path]
        _ = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                  member: "UpdateActivationEnvironment",
                                  arguments: [.dictionary(key: "s", value: "s", env.map { DBusDictEntry(key: .string($0.key), value: .string($0.value)) })])
        let activatable = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "ListActivatableNames")
        #expect(activatable.first?.arrayValue?.contains(.string("org.mpris.MediaPlayer2.tonearm")) == true)
        #expect(try await client.nameHasOwner("org.mpris.MediaPlayer2.tonearm") == false)

        // playerctl 2.4 cannot start a player: it lists players with ListNames only (never ListActivatableNames), so on a
        // bus where only the activation file exists it finds none and sends nothing. Pinned here so a playerctl that
        // learns activation shows up as a failure of this line.
        var playerctlEnv = ProcessInfo.processInfo.environment
        playerctlEnv["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let refused = try await runProcess("/usr/bin/playerctl", ["play"], environment: playerctlEnv)
        #expect(refused.status == 1 && refused.err.contains("No players found"), "\(refused.status) \(refused.err)")
        #expect(try await client.nameHasOwner("org.mpris.MediaPlayer2.tonearm") == false)

        // A media key with no daemon running: the bus starts it and hands it the call, which the new daemon
        // answers (with an empty queue, that there is nothing to play).
        #expect(try await Self.mediaKey("PlayPause", bus: bus.address, expecting: "org.tonearm.Error.NothingToPlay") == 0)
        #expect(try await client.nameHasOwner("org.mpris.MediaPlayer2.tonearm"))
        let listed = try await runProcess("/usr/bin/playerctl", ["-l"], environment: playerctlEnv)
        #expect(listed.out.contains("tonearm"), "\(listed.out) \(listed.err)")

        // The keys a desktop shell binds, on a queue.
        let a = home.file("a.wav"), b = home.file("b.wav")
        try WAV.sine(seconds: 30, sampleRate: 11025, channels: 1).write(to: a)
        try WAV.sine(frequency: 660, seconds: 30, sampleRate: 11025, channels: 1).write(to: b)
        _ = try await client.call(destination: "org.mpris.MediaPlayer2.tonearm", path: "/org/mpris/MediaPlayer2", interface: "org.tonearm.Player1",
                                  member: "ReplaceQueue", arguments: [.stringArray([a.absoluteString, b.absoluteString]), .bool(false)])
        func status() async throws -> String? {
            try await client.getProperty(destination: "org.mpris.MediaPlayer2.tonearm", path: "/org/mpris/MediaPlayer2",
                                         interface: "org.mpris.MediaPlayer2.Player", name: "PlaybackStatus").stringValue
        }
        func title() async throws -> String? {
            try await client.getProperty(destination: "org.mpris.MediaPlayer2.tonearm", path: "/org/mpris/MediaPlayer2",
                                         interface: "org.mpris.MediaPlayer2.Player", name: "Metadata").vardictValue?["xesam:title"]?.stringValue
        }
        #expect(try await Self.mediaKey("PlayPause", bus: bus.address) == 0)
        #expect(try await eventually { try await status() == "Playing" })
        #expect(try await Self.mediaKey("Next", bus: bus.address) == 0)
        #expect(try await eventually { try await title() == "b" })
        #expect(try await Self.mediaKey("Previous", bus: bus.address) == 0)
        #expect(try await eventually { try await title() == "a" })
        #expect(try await Self.mediaKey("PlayPause", bus: bus.address) == 0)
        #expect(try await eventually { try await status() == "Paused" })
        #expect(try await Self.mediaKey("Stop", bus: bus.address) == 0)
        #expect(try await eventually { try await status() == "Stopped" })

        // `tonearm play` uses activation too, once the daemon has gone.
        _ = try await client.call(destination: "org.mpris.MediaPlayer2.tonearm", path: "/org/mpris/MediaPlayer2",
                                  interface: "org.mpris.MediaPlayer2", member: "Quit")
        #expect(try await eventually { !(try await client.nameHasOwner("org.mpris.MediaPlayer2.tonearm")) })
        var cliEnv = playerctlEnv
        cliEnv["PATH"] = "/usr/bin:/bin" // not beside a tonearmd of the build: only the installed one can answer
        let played = try await runProcess(prefix.file("bin/tonearm").path, ["play", a.path], environment: cliEnv)
        #expect(played.status == 0, "\(played.err)")
        #expect(try await eventually { try await status() == "Playing" })
        _ = try await client.call(destination: "org.mpris.MediaPlayer2.tonearm", path: "/org/mpris/MediaPlayer2",
                                  interface: "org.mpris.MediaPlayer2", member: "Quit")
        #expect(try await eventually { !(try await client.nameHasOwner("org.mpris.MediaPlayer2.tonearm")) })

        try await Self.make("uninstall", prefix: prefix.url)
        for file in Self.installed {
            #expect(!FileManager.default.fileExists(atPath: prefix.file(file).path), "\(file) is still there")
        }
    }

    @Test func completionsAndManPagesNameEverySubcommand() async throws {
        let prefix = TemporaryDirectory("tonearm-prefix")
        try await Self.make("install", prefix: prefix.url)
        let man = try String(contentsOf: prefix.file("share/man/man1/tonearm.1"), encoding: .utf8)
        let commands = man.split(separator: "\n").filter { $0.hasPrefix(".SS \"tonearm ") }
            .map { $0.dropFirst(".SS \"tonearm ".count).dropLast().split(separator: " ").map(String.init) }
        let expected = ["play", "pause", "toggle", "stop", "next", "prev", "seek", "volume", "crossfade", "status", "lyrics", "queue", "library", "browse", "rate", "history", "pick", "continue",
                        "midi", "open", "export", "shares", "config", "doctor", "completions", "manual", "waveform", "replaygain", "eq", "playlist", "output", "web"]
        #expect(Set(commands.filter { $0.count == 1 }.map { $0[0] }) == Set(expected))
        #expect(commands.contains(["queue", "move"]) && commands.contains(["midi", "browse"]) && commands.contains(["library", "search"])
                && commands.contains(["playlist", "save"]))
        #expect(commands.contains(["shares", "pending"]) && commands.contains(["shares", "accept"]) && commands.contains(["shares", "decline"]))
        let bash = try String(contentsOf: prefix.file("share/bash-completion/completions/tonearm"), encoding: .utf8)
        let zsh = try String(contentsOf: prefix.file("share/zsh/site-functions/_tonearm"), encoding: .utf8)
        let fish = try String(contentsOf: prefix.file("share/fish/vendor_completions.d/tonearm.fish"), encoding: .utf8)
        for command in commands {
            let word = command.last!
            for (shell, script) in [("bash", bash), ("zsh", zsh), ("fish", fish)] {
                #expect(script.contains(word), "\(shell) completion lacks \(command.joined(separator: " "))")
            }
        }
        // Every command's page section carries its help.
        #expect(man.contains("OVERVIEW: Show and edit the play queue."))
        let tonearmd = try String(contentsOf: prefix.file("share/man/man1/tonearmd.1"), encoding: .utf8)
        #expect(tonearmd.contains("--audio-sink") && tonearmd.contains("--print-config"))
    }
}

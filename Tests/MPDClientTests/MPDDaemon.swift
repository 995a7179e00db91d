import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// The real daemon with its MPD protocol face on a free port (port 0: the daemon picks one and logs it), a music
/// folder of generated WAV files (and a cover image), and the real clients mpc and python-mpd2 pointed at it.
final class MPDDaemon: @unchecked Sendable {
    let d: Daemon
    let music: URL
    private(set) var port = 0
    var socketPath: String { d.home.file("mpd.socket").path }

    /// `titles`: one WAV per title in `Music/Album/`, `seconds` long; `cover`: a folder image beside them.
    /// `connectionTimeout`: long by default, so a loaded machine's pauses never drop a test's own quiet client.
    init(titles: [String] = ["One", "Two", "Three"], seconds: Double = 30, password: String? = nil, cover: Bool = true,
         connectionTimeout: Int = 3600, extraConfig: String = "") throws {
        d = try Daemon()
        music = d.home.file("Music")
        let album = music.appendingPathComponent("Album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for title in titles {
            try WAV.sine(frequency: 440, seconds: seconds, sampleRate: 11025, channels: 1).write(to: album.appendingPathComponent("\(title).wav"))
        }
        if cover { try Data(Self.coverBytes).write(to: album.appendingPathComponent("cover.jpg")) }
        let config = d.home.file("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        var text = "[plugins.library]\nfolders = [\"\(music.path)\"]\n\n[mpd-protocol]\nenabled = true\nport = 0\nunix-socket = \"\(socketPath)\"\n"
        text += "connection-timeout = \(connectionTimeout)\n"
        if let password { text += "password = \"\(password)\"\n" }
        text += extraConfig
        try text.write(to: config, atomically: true, encoding: .utf8)
    }

    /// A small JPEG-looking picture (the art cache takes it by its name and bytes), larger than one binary chunk.
    static let coverBytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)
        + (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } + [0xFF, 0xD9]

    /// Starts the daemon and waits for the MPD port in its log and for the library to hold `songs` songs.
    func start(songs: Int? = 3) async throws {
        try await d.start()
        var found: Int?
        let ok = await eventually(timeout: .seconds(20)) {
            found = d.log.split(separator: "\n").lazy.compactMap { line -> Int? in
                guard let r = line.range(of: "MPD protocol listening on 127.0.0.1:") else { return nil }
                return Int(line[r.upperBound...].prefix { $0.isNumber })
            }.first
            return found != nil
        }
        try #require(ok, "no MPD port in the log:\n\(d.log.suffix(2000))")
        port = found!
        guard let songs else { return }
        try await d.waitFor("the library scan", timeout: .seconds(30)) {
            let stats = (try? await self.mpc("stats").out) ?? ""
            return stats.components(separatedBy: "\n").contains { $0.hasPrefix("Songs:") && $0.dropFirst(6).trimmingCharacters(in: .whitespaces) == String(songs) }
        }
    }

    var environment: [String: String] {
        var env = d.environment
        env["MPD_HOST"] = "127.0.0.1"
        env["MPD_PORT"] = String(port)
        return env
    }

    /// Runs mpc; returns stdout and the exit status.
    @discardableResult
    func mpc(_ arguments: String...) async throws -> (out: String, err: String, status: Int32) {
        try await runProcess("/usr/bin/mpc", arguments, environment: environment)
    }

    /// Runs a Python script with python-mpd2 (`client` is connected; `PORT` and `SOCKET` are set); returns its
    /// output and requires it to succeed.
    func python(_ script: String, password: String? = nil) async throws -> String {
        let prelude = """
        import mpd, os, sys, socket, time
        PORT = int(os.environ['MPD_PORT']); SOCKET = os.environ['MPD_SOCKET']
        client = mpd.MPDClient()
        client.timeout = 30
        client.connect('127.0.0.1', PORT)

        """
        var env = environment
        env["MPD_SOCKET"] = socketPath
        let file = d.home.file("script-\(UUID().uuidString).py")
        try (prelude + script).write(to: file, atomically: true, encoding: .utf8)
        let result = try await runProcess("/usr/bin/python3", [file.path], environment: env)
        #expect(result.status == 0, "python failed: \(result.err)\nout: \(result.out)\ndaemon log:\n\(d.log.suffix(2000))")
        return result.out
    }

    /// Field values of one `mpc -f` style: `mpc status` first line etc. are parsed by the tests themselves.
    func status() async throws -> String { try await mpc("status").out }
}

import DaemonHarness
import Foundation
import TestSupport
import Testing

/// ncmpcpp, the full-screen terminal client, in tmux: it shows the queue and the playing track.
@Suite(.serialized) struct NcmpcppTests {
    @Test func showsTheQueueAndThePlayingTrack() async throws {
        let m = try MPDDaemon()
        try await m.start()
        try await m.mpc("add", "Album")
        try await m.mpc("play", "2")
        try await m.d.waitFor("Playing") { try await m.d.status() == "Playing" }
        let config = m.d.home.file("ncmpcpp")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let tmux = Tmux(socket: "tonearm-mpd-\(getpid())", columns: 120, rows: 30)
        defer { tmux.killServer() }
        try await tmux.start(["env", "HOME=\(m.d.home.url.path)", "TERM=xterm", "/usr/bin/ncmpcpp", "--host", "127.0.0.1",
                              "--port", String(m.port), "--config", "/dev/null"])
        try await tmux.waitFor("shows the queue") { screen in
            let text = screen.joined(separator: "\n")
            return text.contains("One") && text.contains("Two") && text.contains("Three")
        }
        try await tmux.waitFor("shows Three playing") { screen in
            screen.contains { $0.contains("Playing") && $0.contains("Three") }
        }
        // A change from MPRIS shows up in ncmpcpp (it follows with idle).
        _ = try await m.d.call(Daemon.player, "Pause")
        try await tmux.waitFor("shows the pause") { screen in screen.contains { $0.contains("Paused") } }
    }
}

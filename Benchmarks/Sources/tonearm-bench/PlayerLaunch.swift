import Foundation
import TestSupport

/// How each player is started for a `Player.Mode`: the command lines, and for mpd the mpd + mpDris2 pair.
extension Session {
    /// The S16LE 44.1 kHz stereo caps every file-writing tonearm sink uses, so the bytes compare with the peers'.
    static let pcmCaps = "audioconvert ! audio/x-raw,format=S16LE,rate=44100,channels=2"

    /// Spawns the player's processes for `mode` (the one owning the MPRIS name last); returns them.
    func startPrograms(_ player: Player, _ mode: Player.Mode) async throws -> [ChildProcess] {
        if case .tonearmSink = mode, player.kind != .tonearm { throw BenchError("\(player.label) takes no GStreamer sink") }
        switch player.kind {
        case .tonearm: return [try spawn(player.executable, Self.tonearmArguments(mode))]
        case .mpv: return [try spawn(player.executable, Self.mpvArguments(mode, plugin: player.helper ?? ""))]
        case .vlc: return [try spawn(player.executable, Self.vlcArguments(mode), asUser: true)]
        case .mpd: return try await startMPD(player, mode)
        }
    }

    static func tonearmArguments(_ mode: Player.Mode) -> [String] {
        switch mode {
        case .idle: ["--audio-sink", "fakesink sync=true"]
        case .playing(let track, let broken): ["--audio-sink", "fakesink sync=true"] + broken + [track]
        // Unbuffered, so the first buffer reaches the FIFO when filesink renders it, not when stdio's buffer fills.
        case .fifo(let path, _): ["--audio-sink", "\(pcmCaps) ! filesink location=\(path) buffer-mode=unbuffered sync=true"]
        case .tonearmSink(let description): ["--audio-sink", description]
        }
    }

    static func mpvArguments(_ mode: Player.Mode, plugin: String) -> [String] {
        let script = "--script=" + plugin
        return switch mode {
        case .idle, .tonearmSink: ["--no-config", "--no-video", "--ao=null", script, "--idle=yes"]
        case .playing(let track, let broken): ["--no-config", "--no-video", "--ao=null", script, "--loop-file=inf"] + broken + [track]
        case .fifo(let path, _): ["--no-config", "--no-video", "--ao=pcm", "--ao-pcm-file=" + path, "--ao-pcm-waveheader=no",
                                  script, "--idle=yes"]
        }
    }

    static func vlcArguments(_ mode: Player.Mode) -> [String] {
        let common = ["-I", "dummy", "--extraintf", "dbus", "--no-video"]
        return switch mode {
        case .idle, .tonearmSink: common + ["--aout", "dummy"]
        case .playing(let track, let broken): common + ["--aout", "dummy", "--loop"] + broken + [track]
        case .fifo(let path, _): common + ["--aout", "afile", "--audiofile-file", path, "--no-audiofile-wav",
                                           "--audiofile-format", "s16", "--audiofile-channels", "2"]
        }
    }

    /// mpd and mpDris2 for `mode`: an empty music folder when idle; the track's folder, queued, repeating and
    /// playing when playing; audio to the FIFO for `.fifo`.
    func startMPD(_ player: Player, _ mode: Player.Mode) async throws -> [ChildProcess] {
        switch mode {
        case .idle, .tonearmSink:
            let empty = home.file("music").path
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            return try await startMPD(player, music: empty, output: MPDPlayer.nullOutput)
        case .playing(_, let broken) where !broken.isEmpty:
            // mpd's update leaves out files it cannot read, and it queues only what its database holds.
            throw BenchError("mpd queues only files its update read")
        case .playing(let track, _):
            let music = URL(fileURLWithPath: track).deletingLastPathComponent().path
            let name = URL(fileURLWithPath: track).lastPathComponent
            return try await startMPD(player, music: music, output: MPDPlayer.nullOutput,
                                      before: [["update", "--wait"], ["add", name], ["repeat", "on"], ["play"]])
        case .fifo(let path, let music):
            return try await startMPD(player, music: music, output: MPDPlayer.fifoOutput(path), before: [["update", "--wait"]])
        }
    }

    /// mpd with a generated config, then (once mpd accepts connections, and after the `before` mpc commands)
    /// mpDris2 pointed at it. mpDris2 retries a refused connection only every 5 s, so it is started once mpd listens.
    func startMPD(_ player: Player, music: String, output: String, before: [[String]] = []) async throws -> [ChildProcess] {
        guard let mpDris2 = player.helper, let mpc = player.mpc else { throw BenchError("mpd needs mpDris2 and mpc") }
        let dir = home.file("mpd")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let port = try MPD.freePort()
        mpdPort.withLock { $0 = port }
        let config = dir.appendingPathComponent("mpd.conf")
        try MPDPlayer.config(music: music, dir: dir.path, port: port, output: output).write(to: config, atomically: true, encoding: .utf8)
        let server = try spawn(player.executable, ["--no-daemon", config.path], log: "mpd.log")
        guard await MPDPlayer.waitUntilListening(port: port, server) else {
            throw BenchError("mpd did not listen on port \(port):\n" + ((try? String(contentsOf: dir.appendingPathComponent("log"), encoding: .utf8)) ?? ""))
        }
        let client = MPD.Client(mpc: mpc, port: port)
        for command in before { try await client.run(command, timeout: .seconds(60)) }
        let bridge = try spawn(mpDris2, ["-h", "127.0.0.1", "--port", "\(port)"], log: "mpdris2.log")
        return [server, bridge]
    }
}

/// mpd as a player (as opposed to `MPD`, the library scanner): config and readiness.
enum MPDPlayer {
    static let nullOutput = """
        audio_output {
            type "null"
            name "null"
            mixer_type "none"
        }
        """

    /// mpd's fifo output plugin writes raw S16LE 44.1 kHz stereo to the FIFO, paced in real time.
    static func fifoOutput(_ path: String) -> String {
        """
        audio_output {
            type "fifo"
            name "fifo"
            path "\(path)"
            format "44100:16:2"
            mixer_type "none"
        }
        """
    }

    /// The pipe output: raw S16LE 44.1 kHz stereo to a shell command, as fast as it takes it.
    static func pipeOutput(to file: String) -> String {
        """
        audio_output {
            type "pipe"
            name "pipe"
            command "cat > '\(file)'"
            format "44100:16:2"
            mixer_type "none"
        }
        """
    }

    static func config(music: String, dir: String, port: Int, output: String) -> String {
        """
        music_directory "\(music)"
        db_file "\(dir)/db"
        state_file "\(dir)/state"
        pid_file "\(dir)/pid"
        log_file "\(dir)/log"
        bind_to_address "127.0.0.1"
        port "\(port)"
        zeroconf_enabled "no"
        auto_update "no"
        replaygain "off"
        \(output)

        """
    }

    /// Polls (every 2 ms) until something accepts TCP connections on 127.0.0.1:`port`; false if mpd exits or 20 s pass.
    static func waitUntilListening(port: Int, _ server: ChildProcess) async -> Bool {
        await eventually(timeout: .seconds(20), interval: .milliseconds(2)) {
            guard server.isRunning else { return false }
            return acceptsConnections(loopbackPort: port)
        }
    }
}

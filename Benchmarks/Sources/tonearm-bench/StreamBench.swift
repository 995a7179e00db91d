import DBus
import Foundation
import Synchronization
import TestSupport

/// Internet radio: a live MP3 stream from a local Icecast (fed by GStreamer's shout2send, with a song title set
/// through Icecast's metadata update) opened in a running, idle player: time to the first audio bytes at its output
/// (a FIFO), time until its MPRIS Metadata shows the song title, and its memory after a while of listening — tonearm
/// beside mpv (+mpv-mpris) and VLC on the same stream.
struct StreamBench: Sendable {
    let players: [Player]
    let runs: Int
    /// How long each player streams before its RSS is read.
    let listen: Duration
    let gstRegistry: String

    static let song = "Bill Evans - Peace Piece"

    struct Figures: Sendable {
        var audio: [String: [Double]] = [:]
        var title: [String: [Double]] = [:]
        var rss: [String: [Double]] = [:]
        var notes: [String: String] = [:]
    }

    func measure() async throws -> Figures {
        var figures = Figures()
        let icecast: Icecast
        do {
            icecast = try await Icecast()
            try await icecast.startMP3Source(mount: "/radio.mp3", station: "Bench FM", constantBitrate: true)
            try await icecast.setTitle(Self.song, mount: "/radio.mp3")
            // Else the first player measured meets a stream younger than Icecast's burst and waits for it in real time.
            try await icecast.waitForFullBurst("/radio.mp3")
        } catch {
            log("streams: no local Icecast (\(error)); the stream table is left out")
            figures.notes["all"] = "n/a: \(error)"
            return figures
        }
        let url = icecast.url("/radio.mp3")
        for run in 1...runs {
            for player in players where player.kind != .mpd && figures.notes[player.label] == nil {
                do {
                    let (audio, title, rss) = try await measure(player, url: url)
                    figures.audio[player.label, default: []].append(audio)
                    if let title { figures.title[player.label, default: []].append(title) }
                    if let rss { figures.rss[player.label, default: []].append(rss) }
                    log("stream run \(run)/\(runs) \(player.label): first audio \(format(audio)) ms, title \(title.map(format) ?? "none") ms, RSS \(rss.map(format) ?? "?") MiB")
                } catch {
                    if player.kind == .tonearm { throw error }
                    log("\(player.label): stream not measured: \(error)")
                    figures.notes[player.label] = "n/a: " + ("\(error)".split(separator: "\n").first.map(String.init) ?? "failed")
                }
            }
        }
        return figures
    }

    /// The command that opens `url` in the running player: the same MPRIS client (playerctl's OpenUri) for every
    /// player, so the figure is the player's and not its command line's (`tonearm play` starts a Swift process and
    /// subscribes to the stream's signals before it asks).
    private func openCommand(_ player: Player, url: String) -> [String]? {
        switch player.kind {
        case .tonearm, .mpv, .vlc:
            return TonearmBench.which("playerctl").map { [$0, "-p", String(player.busName.dropFirst("org.mpris.MediaPlayer2.".count)), "open", url] }
        case .mpd: return nil
        }
    }

    /// One run: ms to the first audio, ms to the song title in Metadata (nil if it never came), MiB after `listen`.
    private func measure(_ player: Player, url: String) async throws -> (Double, Double?, Double?) {
        try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            let fifo = session.home.file("audio.fifo").path
            let reader = try FIFOReader.make(fifo)
            defer { reader.close() }
            let (_, name) = try await session.launch(player, .fifo(fifo, music: session.home.url.path))
            guard let command = openCommand(player, url: url) else { throw BenchError("no command opens a URL in \(player.label)") }
            let changes = try await session.client.subscribe(DBusMatchRule(
                sender: name, path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            let start = clock.now
            let arrival = reader.firstBytes(timeout: .seconds(20))
            let titled = Task { () -> ContinuousClock.Instant? in
                for await signal in changes {
                    let title = signal.arguments.count > 1
                        ? signal.arguments[1].vardictValue?["Metadata"]?.vardictValue?["xesam:title"]?.stringValue ?? "" : ""
                    if title.contains("Peace Piece") { return clock.now }
                }
                return nil
            }
            let outcome = try await TimedCommand.run(command[0], Array(command.dropFirst()), environment: session.environment)
            guard outcome.status == 0 else { throw BenchError("\(command.joined(separator: " ")) exited with \(outcome.status): \(outcome.output)") }
            guard let first = await arrival.value else { throw BenchError("no audio from \(player.label) within 20 s:\n\(session.playerLog)") }
            let drain = reader.collect()
            let timeout = Task {
                try? await Task.sleep(for: .seconds(10))
                titled.cancel()
            }
            let title = await titled.value
            timeout.cancel()
            try await Task.sleep(for: listen)
            let rss = ProcessStats.residentMiB(session.playerProcesses.withLock { $0 })
            reader.stop()
            _ = await drain.value
            return ((first - start).microseconds / 1000, title.map { ($0 - start).microseconds / 1000 }, rss)
        }
    }

    func markdown(_ f: Figures) -> [String] {
        let labels = ["tonearm"] + players.filter { $0.kind == .mpv || $0.kind == .vlc }.map(\.label)
        var lines = ["", "### Internet radio (a local Icecast MP3 stream, \(runs) runs, median)", ""]
        if let note = f.notes["all"] {
            return lines + ["Not measured: \(note)"]
        }
        lines.append("| metric | " + labels.joined(separator: " | ") + " | best peer | tonearm ÷ best |")
        lines.append("|---|" + labels.map { _ in "---:" }.joined(separator: "|") + "|---|---:|")
        for (name, values) in [("OpenUri → first audio (ms)", f.audio), ("OpenUri → song title in Metadata (ms)", f.title),
                               ("RSS after \(listen.components.seconds) s of streaming (MiB)", f.rss)] {
            let medians = labels.map { label in values[label].flatMap { $0.isEmpty ? nil : Stats.percentile($0, 0.5) } }
            let cells = zip(labels, medians).map { label, m in m.map(format) ?? f.notes[label] ?? (label == "tonearm" ? "none" : "no signal") }
            let peers = zip(labels, medians).dropFirst().compactMap { l, m in m.map { (l, $0) } }
            let best = peers.min { $0.1 < $1.1 }
            let ratio = best.flatMap { b in medians[0].map { $0 / b.1 } }
            lines.append("| \(name) | " + cells.joined(separator: " | ") + " | " + (best.map { "\($0.0) (\(format($0.1)))" } ?? "–")
                         + " | " + (ratio.map { format($0) + ($0 > 1 ? " (behind)" : "") } ?? "–") + " |")
        }
        return lines
    }
}

import Foundation

/// The Markdown report: settings, the tables, the versions measured.
struct Report {
    /// The peers of the main table, in column order.
    static let peers = ["mpv", "vlc", "mpd"]

    /// The players measured in the main table ("tonearm" and the peers that were).
    let measured: Set<String>
    /// Whether mpd's library scan was measured (it needs mpd and mpc, not mpDris2).
    let scanPeerMeasured: Bool
    /// What to print for a peer that is not measured at all ("not installed: …" or "skipped"), by peer.
    let peerStatus: [String: String]
    let results: Results
    let versions: [(String, String)]
    let settings: Bench.Settings
    /// Files in the generated library, and their total size in bytes.
    let scanFiles: Int
    let scanBytes: Int

    var markdown: String {
        let date = ISO8601DateFormatter().string(from: Date())
        let s = settings
        var lines = [
            "# Tonearm benchmarks",
            "",
            "\(date) · \(ProcessInfo.processInfo.activeProcessorCount) CPUs · \(s.runs) runs (median shown) · "
                + "\(s.calls) calls per client per run · CPU over \(format(s.cpuWindow.microseconds / 1e6)) s of playback · "
                + "\(s.toggles) PlayPause and \(s.seeks)+\(s.seeks) Seek calls · \(s.playerctlRuns) playerctl runs per run. "
                + "Lower is better unless the row says otherwise. The ratio is tonearm ÷ the best peer on that row; "
                + "\"behind\" means the best peer did better. Bus-floor rows are dbus-daemon answering GetId in each "
                + "player's session (no ratio).",
            "",
            "| metric | tonearm | mpv | vlc | mpd | best peer | tonearm ÷ best |",
            "|---|---:|---:|---:|---:|---|---:|",
        ]
        var behind: [String] = []
        for metric in Metric.playback {
            let (line, lag) = row(metric)
            lines.append(line)
            if let lag { behind.append(lag) }
        }
        lines += ["", behind.isEmpty ? "Tonearm is at or ahead of the best measured peer on every row." : "Where tonearm is behind the best peer:", ""]
        lines += behind.map { "- " + $0 }
        lines += [
            "",
            "## Library scan",
            "",
            "\(scanFiles) tagged files (FLAC and Ogg Vorbis, \(format(Double(scanBytes) / 1_048_576)) MB in all) in "
                + "Artist/Album folders · \(s.runs) runs (median shown). Cold: empty index; warm: again, nothing changed. "
                + "Files/s: higher is better, ratio > 1 means tonearm is faster; memory: lower is better.",
            "",
            "| metric | tonearm | mpd | ratio (tonearm/mpd) | better |",
            "|---|---:|---:|---:|---|",
        ]
        lines += Metric.scan.map { scanRow($0) + " \($0.higherIsBetter ? "higher" : "lower") |" }
        lines += ["", "Measured:", ""]
        lines += versions.map { "- \($0.0): \($0.1)" }
        return lines.joined(separator: "\n") + "\n"
    }

    private func figure(_ metric: Metric, _ value: Double) -> String {
        metric.isCount ? (value == 0 ? "0" : String(format: "%+.0f", value)) : format(value)
    }

    /// The text of a player's cell: its figure (with a note, if any), the note alone, or why it was not measured.
    private func cell(_ player: String, _ metric: Metric) -> String {
        if player != "tonearm" && !measured.contains(player) { return peerStatus[player] ?? "skipped" }
        if let failure = results.failures[player] { return "failed: " + clean(failure) }
        let note = results.notes[player]?[metric].map(clean)
        guard let value = results.median(player, metric) else { return note ?? "–" }
        return figure(metric, value) + (note.map { " (\($0))" } ?? "")
    }

    /// `| label | tonearm | mpv | vlc | mpd | best | ratio |`, and a line for the "behind" list when tonearm is behind.
    private func row(_ metric: Metric) -> (String, String?) {
        let label = metric.label(clients: settings.clients)
        let cells = ["tonearm"] + Self.peers
        let body = cells.map { cell($0, metric) }.joined(separator: " | ")
        if metric.isFloor { return ("| \(label) | \(body) | (floor) | – |", nil) }
        let peerFigures = Self.peers.compactMap { peer -> (String, Double)? in
            guard measured.contains(peer), results.failures[peer] == nil, let v = results.median(peer, metric) else { return nil }
            return (peer, v)
        }
        let score: (Double) -> Double = metric.isCount ? { abs($0) } : metric.higherIsBetter ? { -$0 } : { $0 }
        guard let best = peerFigures.min(by: { score($0.1) < score($1.1) }), let ours = results.median("tonearm", metric) else {
            return ("| \(label) | \(body) | – | – |", nil)
        }
        let bestCell = "\(best.0) (\(figure(metric, best.1)))"
        if metric.isCount {
            let lag = abs(ours) - abs(best.1)
            let text = lag > 0 ? "\(Int(lag)) samples more (behind)" : "same or better"
            return ("| \(label) | \(body) | \(bestCell) | \(text) |",
                    lag > 0 ? "\(label): \(figure(metric, ours)) against \(best.0)'s \(figure(metric, best.1))" : nil)
        }
        guard best.1 > 0 else { return ("| \(label) | \(body) | \(bestCell) | – |", nil) }
        let ratio = ours / best.1
        let isBehind = metric.higherIsBetter ? ratio < 1 : ratio > 1
        let text = String(format: "%.2f", ratio) + (isBehind ? " (behind)" : "")
        let lag = isBehind
            ? "\(label): \(figure(metric, ours)) against \(best.0)'s \(figure(metric, best.1)) — "
                + (metric.higherIsBetter ? String(format: "%.0f%% of it", ratio * 100) : String(format: "%.2f× as much", ratio))
            : nil
        return ("| \(label) | \(body) | \(bestCell) | \(text) |", lag)
    }

    /// `| label | tonearm | mpd | ratio |` of the library-scan table.
    private func scanRow(_ metric: Metric) -> String {
        let ours = results.median("tonearm", metric)
        let peer: String
        var ratio = "–"
        if !scanPeerMeasured {
            peer = peerStatus["mpd-scan"] ?? "skipped"
        } else if let failure = results.failures["mpd-scan"] {
            peer = "failed: " + clean(failure)
        } else if let theirs = results.median("mpd-scan", metric) {
            peer = format(theirs)
            if let ours, theirs > 0 { ratio = String(format: "%.2f", ours / theirs) }
        } else {
            peer = "–"
        }
        return "| \(metric.label(clients: settings.clients)) | \(ours.map(format) ?? "–") | \(peer) | \(ratio) |"
    }

    private func clean(_ text: String) -> String {
        String(text.replacingOccurrences(of: "|", with: "/").prefix(100))
    }
}

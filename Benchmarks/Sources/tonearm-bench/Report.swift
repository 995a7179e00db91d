import Foundation

/// The Markdown report: settings, the tables, the versions measured.
struct Report {
    /// The players measured: "tonearm", and "mpv" and/or "mpd" when they were.
    let players: [String]
    /// What to print for a peer that is not measured at all ("not installed" or "skipped"), by peer.
    let peerStatus: [String: String]
    let results: Results
    let versions: [(String, String)]
    let runs: Int
    let calls: Int
    let clients: Int
    /// Files in the generated library, and their total size in bytes.
    let scanFiles: Int
    let scanBytes: Int

    var markdown: String {
        let date = ISO8601DateFormatter().string(from: Date())
        var lines = [
            "# Tonearm benchmarks",
            "",
            "\(date) · \(ProcessInfo.processInfo.activeProcessorCount) CPUs · \(runs) runs (median shown) · "
                + "\(calls) Get(Position) calls per client per run. Lower is better; ratio < 1 means tonearm is faster.",
            "",
            "| metric | tonearm | mpv | ratio (tonearm/mpv) |",
            "|---|---:|---:|---:|",
        ]
        lines += Metric.playback.map { row($0, peer: "mpv") }
        lines += [
            "",
            "## Library scan",
            "",
            "\(scanFiles) tagged files (FLAC and Ogg Vorbis, \(format(Double(scanBytes) / 1_048_576)) MB in all) in "
                + "Artist/Album folders · \(runs) runs (median shown). Cold: empty index; warm: again, nothing changed. "
                + "Files/s: higher is better, ratio > 1 means tonearm is faster; memory: lower is better.",
            "",
            "| metric | tonearm | mpd | ratio (tonearm/mpd) | better |",
            "|---|---:|---:|---:|---|",
        ]
        lines += Metric.scan.map { row($0, peer: "mpd") + " \($0.higherIsBetter ? "higher" : "lower") |" }
        lines += ["", "Measured:", ""]
        lines += versions.map { "- \($0.0): \($0.1)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `| label | tonearm | peer | ratio |`
    private func row(_ metric: Metric, peer label: String) -> String {
        let ours = results.median("tonearm", metric)
        let peer: String
        var ratio = "–"
        if !players.contains(label) {
            peer = peerStatus[label] ?? "skipped"
        } else if let failure = results.failures[label] {
            peer = "failed: " + failure.replacingOccurrences(of: "|", with: "/")
        } else if let theirs = results.median(label, metric) {
            peer = format(theirs)
            if let ours, theirs > 0 { ratio = String(format: "%.2f", ours / theirs) }
        } else {
            peer = "–"
        }
        return "| \(metric.label(clients: clients)) | \(ours.map(format) ?? "–") | \(peer) | \(ratio) |"
    }
}

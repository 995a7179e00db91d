import Foundation

/// The Markdown report: settings, the table, the versions measured.
struct Report {
    let players: [String]
    /// What to print for mpv when it is not measured at all: "not installed" or "skipped".
    let peerStatus: String
    let results: Results
    let versions: [(String, String)]
    let runs: Int
    let calls: Int
    let clients: Int

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
        for metric in Metric.allCases {
            let ours = results.median("tonearm", metric)
            let peer: String
            var ratio = "–"
            if !players.contains("mpv") {
                peer = peerStatus
            } else if let failure = results.failures["mpv"] {
                peer = "failed: " + failure.replacingOccurrences(of: "|", with: "/")
            } else if let theirs = results.median("mpv", metric) {
                peer = format(theirs)
                if let ours, theirs > 0 { ratio = String(format: "%.2f", ours / theirs) }
            } else {
                peer = "–"
            }
            lines.append("| \(metric.label(clients: clients)) | \(ours.map(format) ?? "–") | \(peer) | \(ratio) |")
        }
        lines += ["", "Measured:", ""]
        lines += versions.map { "- \($0.0): \($0.1)" }
        return lines.joined(separator: "\n") + "\n"
    }
}

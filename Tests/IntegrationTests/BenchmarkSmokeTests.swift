import Foundation
import TestSupport
import Testing

/// Runs the benchmark in its smallest form against the debug tonearmd: it must finish and print
/// its table. Figures are never checked — benchmarks are not timed tests.
@Suite struct BenchmarkSmokeTests {
    static let rows = [
        "start-up to bus name (ms)",
        "start-up to bus name, cold GStreamer registry (ms)",
        "Get(Position) p50, 1 client (µs)",
        "Get(Position) p99, 1 client (µs)",
        "Get(Position) p50, 8 clients (µs)",
        "Get(Position) p99, 8 clients (µs)",
    ]
    /// The library-scan table (tonearm | mpd | ratio | better).
    static let scanRows = [
        "library scan, cold (files/s)",
        "library scan, warm (files/s)",
        "peak memory during scan (MB)",
    ]

    @Test func quickRunPrintsTheTable() async throws {
        let bin = Daemon.binDirectory
        let bench = bin.appendingPathComponent("tonearm-bench")
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "tonearm-bench is not built in \(bin.path)")
        let output = TemporaryDirectory("tonearm-bench-out")
        let report = output.file("latest.md")

        let (out, err, status) = try await runProcess(bench.path, [
            "--quick", "--skip-peers",
            "--tonearmd", bin.appendingPathComponent("tonearmd").path,
            "--output", report.path,
        ])

        #expect(status == 0, "tonearm-bench failed:\n\(err.suffix(4000))")
        #expect(out.contains("| metric | tonearm | mpv | ratio (tonearm/mpv) |"))
        #expect(out.contains("| metric | tonearm | mpd | ratio (tonearm/mpd) | better |"))
        let lines = out.split(separator: "\n").map(String.init)
        for (row, columns) in Self.rows.map({ ($0, 4) }) + Self.scanRows.map({ ($0, 5) }) {
            // | row | <tonearm figure> | skipped | – | (better |)
            let line = lines.first { $0.hasPrefix("| \(row) |") }
            #expect(line != nil, "no row \"\(row)\" in:\n\(out)")
            if let cells = line?.split(separator: "|").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                #expect(cells.count == columns && Double(cells[1]) != nil && cells[2] == "skipped", "bad row: \(line ?? "")")
                if columns == 5 { #expect(["higher", "lower"].contains(cells[4]), "bad row: \(line ?? "")") }
            }
        }
        // The MIDI table: tonearm figures, fluidsynth skipped.
        #expect(out.contains("| metric | tonearm | fluidsynth | ratio (tonearm/fluidsynth) |"))
        for row in ["list 200 MIDI files, first (s)", "list 200 MIDI files, again (s)", "render 1 min of MIDI (s)"] {
            let cells = lines.first { $0.hasPrefix("| \(row) |") }?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.map { Double($0[1]) != nil } == true, "no figure for \"\(row)\" in:\n\(out)")
        }
        #expect(lines.contains { $0.hasPrefix("| render 1 min of MIDI (s) |") && $0.contains("| skipped |") })
        let written = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
        #expect(written.trimmingCharacters(in: .whitespacesAndNewlines) == out, "the table written to --output differs from stdout")
    }
}

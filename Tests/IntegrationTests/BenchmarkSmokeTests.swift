import Foundation
import DaemonHarness
import TestSupport
import Testing

/// Runs the benchmark in its smallest form against the debug tonearmd: it must finish and print
/// its table. Figures are never checked — benchmarks are not timed tests.
@Suite struct BenchmarkSmokeTests {
    /// The main table (metric | tonearm | mpv | vlc | mpd | best peer | tonearm ÷ best).
    static let rows = [
        "start-up to bus name (ms)",
        "start-up to bus name, cold GStreamer registry (ms)",
        "spawn with a FILE → Metadata shows the track (ms)",
        "spawn with a FILE → Metadata shows the track, cold GStreamer registry (ms)",
        "start with two broken files before a good one → first answer, Get(PlaybackStatus) (ms)",
        "start with two broken files before a good one → Metadata shows the good one (ms)",
        "slowest MPRIS call in the first 2 s of a start with a FILE (ms)",
        "slowest MPRIS call in the first 2 s of a start with a FILE, every CPU busy (ms)",
        "bus floor: GetId p50, 1 client (µs)",
        "Get(Position) p50, 1 client (µs)",
        "bus floor: GetId p99, 1 client (µs)",
        "Get(Position) p99, 1 client (µs)",
        "bus floor: GetId p50, 8 clients (µs)",
        "Get(Position) p50, 8 clients (µs)",
        "Get(Position) p99, 8 clients (µs)",
        "Get(Position) calls/s, 8 clients, % of bus GetId calls/s (higher is better)",
        "playerctl status wall time (ms)",
        "PlayPause → PropertiesChanged, median (ms)",
        "PlayPause → PropertiesChanged, p90 (ms)",
        "Seek → Seeked, playing (ms)",
        "Seek → Seeked, paused (ms)",
        "SetPosition → Seeked, playing (ms)",
        "SetPosition → Seeked, paused (ms)",
        "RSS idle (MiB)",
        "RSS playing a WAV (MiB)",
        "CPU per minute of playback, WAV (s)",
        "RSS playing an Ogg Vorbis (MiB)",
        "CPU per minute of playback, Ogg Vorbis (s)",
        "RSS playing an MP3 (MiB)",
        "CPU per minute of playback, MP3 (s)",
        "gapless join: samples missing (-) or extra (+)",
        "open FILE → first audio (ms)",
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
        #expect(out.contains("| metric | tonearm | mpv | vlc | mpd | best peer | tonearm ÷ best |"))
        #expect(out.contains("| metric | tonearm | mpd | ratio (tonearm/mpd) | better |"))
        let lines = out.split(separator: "\n").map(String.init)
        func cells(_ row: String) -> [String]? {
            lines.first { $0.hasPrefix("| \(row) |") }?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        /// A figure, possibly followed by a note in brackets: "1.23", "0", "2.5 (1 of 3 without Seeked)".
        func isFigure(_ cell: String) -> Bool { Double(cell.split(separator: " ").first ?? "") != nil }
        for row in Self.rows {
            // | row | <tonearm figure> | skipped | skipped | skipped | (floor) or – | – |
            let line = cells(row)
            #expect(line != nil, "no row \"\(row)\" in:\n\(out)")
            if let line {
                #expect(line.count == 7 && isFigure(line[1]) && line[2...4].allSatisfy { $0 == "skipped" },
                        "bad row: \(line.joined(separator: " | "))")
            }
        }
        for row in Self.scanRows {
            // | row | <tonearm figure> | skipped | – | higher or lower |
            let line = cells(row)
            #expect(line != nil, "no row \"\(row)\" in:\n\(out)")
            if let line {
                #expect(line.count == 5 && isFigure(line[1]) && line[2] == "skipped" && ["higher", "lower"].contains(line[4]),
                        "bad row: \(line.joined(separator: " | "))")
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

import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 5: a thousand track changes, gapless and not; memory, file descriptors and threads before and after.
@Suite(.serialized, .timeLimit(.minutes(20))) struct EnduranceTests {
    @Test func aThousandTrackChangesLeaveNothingBehind() async throws {
        let changes = Reliability.size(150, 1000)
        let d = try Daemon()
        // WAVs of one format hand over gaplessly; the Ogg files in between make the pipeline change decoders.
        var files: [String] = []
        for i in 0..<10 { files.append(try d.sine("w\(i).wav", seconds: 0.15, frequency: 300 + Double(i) * 40)) }
        for i in 0..<4 {
            let ogg = d.media.file("o\(i).ogg")
            let (_, err, status) = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=8", "!", "audioconvert", "!",
                                                                                       "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(ogg.path)"])
            try #require(status == 0, "\(err)")
            files.insert(ogg.path, at: i * 3)
        }
        // scripts/reliability runs this part against an AddressSanitizer build too, to count leaks at exit.
        let sanitized = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY_SANITIZED_DAEMON"]
        if let sanitized {
            d.daemonExecutable = sanitized
            d.extraEnvironment["ASAN_OPTIONS"] = "detect_leaks=1"
        }
        let starts = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        // The loop is set before anything is queued: the 14 files play through in well under a second with
        // `sync=false`, so a loop set after a start with files came, on a loaded machine, after the queue had ended
        // (Stopped, and the warm-up waited in vain).
        try await d.start(sink: "fakesink sync=false")
        try await d.set(Daemon.player, "LoopStatus", .string("Playlist"))
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray(files), .bool(true)])
        let pid = try #require(d.process?.pid)
        func changed() -> Int {
            starts.signals.filter { $0.arguments.count > 1 && $0.arguments[1].vardictValue?["Metadata"] != nil }.count
        }
        let warmed = await eventually(timeout: .seconds(120)) { changed() >= 40 }
        if !warmed {
            let loop = try await d.get(Daemon.player, "LoopStatus")
            Issue.record("warm-up: \(changed()) track changes in 120 s; PlaybackStatus \(try await d.status()), LoopStatus \(loop); daemon log:\n\(d.log.suffix(3000))")
        }
        try #require(warmed)
        await letTimePass(.seconds(11), because: "one pass of the daemon's 10 s malloc_trim, which nothing announces")
        let before = (rss: Reliability.rss(pid) ?? 0, fds: Reliability.fileDescriptors(pid) ?? 0, threads: Reliability.threads(pid) ?? 0)
        let startCount = changed()
        try await d.waitFor("\(changes) track changes", timeout: .seconds(900)) { changed() >= startCount + changes }
        _ = try await d.call(Daemon.player, "Pause")
        await letTimePass(.seconds(11), because: "one pass of the daemon's 10 s malloc_trim, which nothing announces")
        let after = (rss: Reliability.rss(pid) ?? 0, fds: Reliability.fileDescriptors(pid) ?? 0, threads: Reliability.threads(pid) ?? 0)
        let growth = before.rss > 0 ? Double(after.rss - before.rss) / Double(before.rss) : 0
        let alive = d.process?.isRunning == true
        var leaked = "not measured (no sanitizer build given)"
        if sanitized != nil {
            _ = await d.terminate() // LeakSanitizer reports when the process exits
            let summary = d.log.split(separator: "\n").first { $0.contains("SUMMARY: AddressSanitizer") }.map(String.init)
            let bytes = summary.flatMap { line in line.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) } } ?? 0
            leaked = summary == nil ? "0 bytes" : "\(bytes) bytes (\(summary!))"
            #expect(bytes < 65_536, "LeakSanitizer: \(summary ?? "")")
        }
        #expect(alive, "the daemon died during the track changes")
        // Under AddressSanitizer freed memory sits in its quarantine: the RSS bound holds for the plain build only.
        if sanitized == nil { #expect(growth < 0.10, "RSS \(before.rss) → \(after.rss) kB") }
        #expect(after.fds <= before.fds + 2, "file descriptors \(before.fds) → \(after.fds)")
        #expect(after.threads <= before.threads + 2, "threads \(before.threads) → \(after.threads)")
        Reliability.report(5, sanitized == nil ? "Endurance" : "Endurance under AddressSanitizer", tried: [
            "\(changes) track changes through a looping queue of 10 short WAVs (gapless hand-overs) and 4 Ogg files (decoder changes), "
                + "played as fast as the pipeline goes (fakesink sync=false), after 40 changes of warm-up",
            sanitized != nil ? "the daemon was an AddressSanitizer build (swift build -Xswiftc -sanitize=address) with LeakSanitizer reporting at exit"
                : "the daemon was the plain build (scripts/reliability also runs an AddressSanitizer build for the leak count)",
        ], held: [
            "RSS within 10% (\(before.rss) → \(after.rss) kB, \(String(format: "%+.1f%%", growth * 100)))",
            "file descriptors \(before.fds) → \(after.fds), threads \(before.threads) → \(after.threads) (bound: +2)",
            "LeakSanitizer at exit: \(leaked) (bound: under 64 KB however many changes: one-off library allocations, not per track)",
        ], figures: [("track changes", "\(changed() - startCount)"), ("RSS before / after (kB)", "\(before.rss) / \(after.rss)"),
                     ("file descriptors before / after", "\(before.fds) / \(after.fds)"), ("threads before / after", "\(before.threads) / \(after.threads)")])
    }
}

import CCodePages
import Foundation
import Logging
import ServiceLifecycle

/// Hands back memory the daemon holds but does not use: the allocator's every ten seconds, the pages of code and
/// constants once the start is over (the daemon gone quiet), ten seconds later, and then every minute.
///
/// glibc keeps freed memory in its arenas (blocks of 128 KiB and more are mapped on their own and go back at once, see
/// `DaemonRun`); a daemon that runs for weeks hands the rest back instead of keeping its high-water mark. The kernel
/// keeps every page of code and constants the daemon ever ran mapped, and 16 pages around each one first touched: the
/// start, a library scan or a face's first use leave 10–15 MiB mapped of which playback runs about 2. Those pages are
/// unmapped (they stay in the page cache); what runs again is mapped back by a minor fault. A pass and the faults
/// after it cost about 4 ms of CPU: every ten seconds that would be a tenth of what playback costs, once a minute a
/// fiftieth.
struct MemoryTrimmer: DaemonService {
    let turn: StartTurn
    /// The start is over once this is reached too (GStreamer's set-up).
    let startOver: Milestone
    /// Between two passes: ten seconds, or `TONEARM_MEMORY_TRIM_INTERVAL` seconds (for tests).
    var interval: Duration = .seconds(10)

    var description: String { turn.name }

    func run() async {
        guard await turn.start() else { return }
        if await startOver.wait() {
            // The passes run on a C thread of their own: after one has unmapped the code, nothing of Swift's (the
            // clock, a task's sleep, the dispatch timer) runs on its behalf to map pages straight back.
            let window = min(.milliseconds(250), interval)
            let config = tn_trimmer_config(quiet_window_ms: Self.milliseconds(window),
                                           quiet_busy_ms: Self.milliseconds(window / 25),
                                           max_quiet_windows: 20, interval_ms: Self.milliseconds(interval),
                                           drop_every: Self.codePagesEvery,
                                           report: turn.logger.logLevel <= .debug ? reportPass : nil)
            let started = tn_trimmer_start(config)
            if started == 0 {
                try? await gracefulShutdown()
                tn_trimmer_stop()
            } else {
                turn.logger.warning("memory trimmer not started: \(String(cString: strerror(started)))")
            }
        }
        await turn.stop()
    }

    /// One pass in `codePagesEvery` also unmaps the code and constants' pages (the first, once the start is over,
    /// included; the second too, see `tn_trimmer_config`): once a minute at the default interval.
    static let codePagesEvery: UInt32 = 6

    /// At least a millisecond: a zero interval is refused by the thread.
    static func milliseconds(_ duration: Duration) -> UInt32 { UInt32(clamping: max(1, duration.wholeMilliseconds)) }
}

/// Logs a pass that unmapped code pages (`--verbose`); called on the trimmer's thread.
private let reportPass: @convention(c) (Int, Int, Int, Int64) -> Void = { advised, before, after, nanoseconds in
    guard advised > 0 else { return }
    trimmerLogger.debug("code pages dropped in \(Duration.nanoseconds(nanoseconds)): resident \(before) → \(after) MiB (\(advised >> 20) MiB of code and constants looked at)")
}

private let trimmerLogger = Logger(label: "tonearmd")

import CCodePages
import Foundation
import Logging
import ServiceLifecycle

/// Hands back memory the daemon holds but does not use: the allocator's every ten seconds, the pages of code and
/// constants once the start is over (the daemon gone quiet) and then every minute.
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
            await cancelWhenGracefulShutdown {
                // The start's tail (the faces' listeners, the first scan, the first track's set-up) runs after the
                // engine is up: the first pass waits for the daemon to go quiet, so it hands back their code too.
                // (A test's short interval shortens the look too.)
                let window = min(.milliseconds(250), interval)
                guard await Self.untilQuiet(window: window, busy: window / 25) else { return }
                var pass = 0
                while true {
                    // What only the start ran (the arguments, the config, building every part) is handed back first.
                    Self.trim(codePages: Self.dropsCodePages(atPass: pass), logger: turn.logger)
                    pass += 1
                    do { try await Task.sleep(for: interval) } catch { return }
                }
            }
        }
        await turn.stop()
    }

    /// Waits until the process used less than `busy` of CPU over `window`, at most `limit` windows; false when
    /// cancelled.
    static func untilQuiet(window: Duration, busy: Duration, limit: Int = 20) async -> Bool {
        var last = processCPU()
        for _ in 0..<limit {
            do { try await Task.sleep(for: window) } catch { return false }
            let now = processCPU()
            if now - last < busy { break }
            last = now
        }
        return true
    }

    /// The CPU the whole process has used (every thread's, the exited ones' included).
    static func processCPU() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// Whether pass `n` (0: the start just over; one every `interval`) also unmaps the code and constants' pages.
    static func dropsCodePages(atPass n: Int) -> Bool { n % 6 == 0 }

    /// One pass: the allocator's free memory, then (`codePages`) the code and constants' pages.
    static func trim(codePages: Bool, logger: Logger) {
        _ = malloc_trim(0)
        guard codePages else { return }
        // The figures are read only for the debug log that shows them.
        guard logger.logLevel <= .debug else {
            _ = tn_drop_read_only_pages()
            return
        }
        let clock = ContinuousClock()
        let (began, before) = (clock.now, residentMiB())
        let advised = tn_drop_read_only_pages()
        logger.debug("code pages dropped in \(began.duration(to: clock.now)): resident \(before) → \(residentMiB()) MiB (\(advised >> 20) MiB of code and constants looked at)")
    }

    /// The process's resident memory, in whole MiB (from /proc/self/statm: its second field, in pages).
    static func residentMiB() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0, let pages = String(decoding: bytes[..<count], as: UTF8.self).split(separator: " ").dropFirst().first
            .flatMap({ Int($0) }) else { return 0 }
        return (pages * Int(sysconf(Int32(_SC_PAGESIZE)))) >> 20
    }
}

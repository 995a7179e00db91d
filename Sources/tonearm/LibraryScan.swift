import DBus

/// `tonearm library scan`: subscribes to the scan signals and to the daemon's departure,
/// calls Scan, shows the progress and returns ScanFinished's counts.
struct ScanWatcher {
    let client: LibraryClient
    let json: Bool

    enum Event: Sendable {
        case scan(ScanEvent)
        case daemonLeft
        case interrupted
        case connectionLost
    }

    func run() async throws -> ScanSummary {
        // Subscribe (and wait for the bus to confirm) before calling Scan, so that no
        // signal can be missed, and before checking the daemon is there, so that its
        // departure cannot be either.
        let scanEvents = try await client.scanEvents()
        let departure = try await client.daemonDeparture()
        guard try await client.player.isDaemonRunning() else {
            throw CLIFailure.unreachable(
                "the Tonearm daemon is not running (nobody owns \(PlayerClient.busName) on the session bus); "
                    + "`tonearm play` starts it")
        }

        let (events, continuation) = AsyncStream<Event>.makeStream()
        let feeders = [
            Task {
                for await event in scanEvents { continuation.yield(.scan(event)) }
                continuation.yield(.connectionLost)
            },
            Task {
                for await _ in departure { continuation.yield(.daemonLeft) }
            },
        ]
        let interrupts = InterruptWatch { continuation.yield(.interrupted) }
        defer {
            for feeder in feeders { feeder.cancel() }
            interrupts.cancel()
        }

        let mode: ScanDisplay.Mode = json ? .silent : (Output.stdoutIsTerminal ? .live : .lines)
        let display = ScanDisplay(mode: mode)
        if mode != .silent, let folders = try? await client.folders(), !folders.isEmpty {
            Output.line("scanning " + folders.joined(separator: ", "))
        }
        try await client.scan()
        display.begin()
        defer { display.end() }

        for await event in events {
            switch event {
            case .scan(.progress(let done, let total)):
                display.show(done: done, total: total)
            case .scan(.finished(let summary)):
                display.end(keepingLine: false)
                return summary
            case .daemonLeft:
                display.end()
                throw CLIFailure.unreachable("the Tonearm daemon left the bus before the scan finished")
            case .connectionLost:
                display.end()
                throw CLIFailure.unreachable("lost the connection to the session bus")
            case .interrupted:
                display.end()
                throw CLIFailure(message: "interrupted; the scan goes on in the daemon", code: 130)
            }
        }
        throw CLIFailure.unreachable("lost the connection to the session bus")
    }
}

/// Where `library scan` shows its progress.
final class ScanDisplay {
    enum Mode {
        /// A bar redrawn in place (a terminal).
        case live
        /// One "scanned DONE/TOTAL" line per report (a pipe or file).
        case lines
        /// Nothing (--json).
        case silent
    }

    let mode: Mode
    private var started = false
    private var ended = false
    private var lastLine = ""

    init(mode: Mode) {
        self.mode = mode
    }

    /// Hides the cursor and shows an empty bar.
    func begin() {
        guard mode == .live, !started else { return }
        started = true
        lastLine = ScanBar.render(done: 0, total: 0, columns: Output.terminalColumns ?? 80)
        Output.out("\u{1B}[?25l\r\u{1B}[2K" + lastLine)
    }

    func show(done: UInt32, total: UInt32) {
        switch mode {
        case .live:
            begin()
            lastLine = ScanBar.render(done: done, total: total, columns: Output.terminalColumns ?? 80)
            Output.out("\r\u{1B}[2K" + lastLine)
        case .lines:
            Output.line("scanned \(done)/\(total)")
        case .silent:
            break
        }
    }

    /// Gives the cursor back (once): leaving the bar standing on its own line, or wiping it.
    func end(keepingLine: Bool = true) {
        guard mode == .live, started, !ended else { return }
        ended = true
        Output.out("\r\u{1B}[2K" + (keepingLine ? lastLine + "\n" : "") + "\u{1B}[?25h")
    }
}

/// The live line: `scanning  [########------------]  1234/5678  21%`.
enum ScanBar {
    static let barWidth = 30
    static let minimumBarWidth = 10

    /// The line for `done` of `total` files, fitted into `columns` minus two (so that neither
    /// it nor a `^C` echoed after it wraps).
    static func render(done: UInt32, total: UInt32, columns: Int) -> String {
        let room = max(columns - 2, 1)
        let head = "scanning"
        guard total > 0 else {
            return FollowLine.truncate(done > 0 ? "\(head)…  \(done) files" : "\(head)…", to: room)
        }
        let fraction = min(1, Double(done) / Double(total))
        return render(head, fraction: fraction, counts: "\(done)/\(total)  \(Int((fraction * 100).rounded(.down)))%", columns: columns)
    }

    /// `HEAD  [#####-----]  COUNTS`, the bar narrowed (or dropped) to fit `columns` minus two.
    static func render(_ head: String, fraction: Double, counts: String, columns: Int) -> String {
        let room = max(columns - 2, 1)
        var width = barWidth
        while width > minimumBarWidth, head.count + 2 + width + 2 + 2 + counts.count > room { width -= 1 }
        if head.count + 2 + width + 2 + 2 + counts.count > room {
            return FollowLine.truncate(head + "  " + counts, to: room)
        }
        let filled = min(width, Int((min(1, max(0, fraction)) * Double(width)).rounded(.down)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        return head + "  " + bar + "  " + counts
    }
}

import Dispatch
import Foundation
import ServiceLifecycle
import Synchronization

/// SIGTERM, SIGINT, SIGHUP and MPRIS Quit, all taken to one graceful path: the service group's shutdown, which
/// stops every part in reverse start order, the player last (it saves the state).
///
/// Catches the signals from the very start (the daemon owns its bus name before its parts exist); one that arrives
/// before `attach` is remembered and handed on to the group as soon as there is one. Once attached the group's own
/// signal handling sees the same signals; asking it twice is harmless.
///
/// A shutdown that does not end within `deadline` (a sink blocked in its device or file, a FIFO with no reader, holds
/// the thread that changes the pipeline's state, and every command after it) ends the process anyway, with status 3
/// and a line saying so: what the player saves on every change is on disk by then, and a daemon that ignores SIGTERM
/// is worse than one that leaves its audio output as it is.
final class Shutdown: Sendable {
    private struct State {
        var group: ServiceGroup?
        var requested = false
    }
    /// How long a shutdown may take: 20 s, or `TONEARM_SHUTDOWN_DEADLINE` seconds (for tests).
    let deadline: Duration = .seconds(fromEnvironment: "TONEARM_SHUTDOWN_DEADLINE") ?? .seconds(20)

    private let state = Mutex(State())
    // Dispatch sources are thread-safe; they are only resumed once, here.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]

    init() {
        sources = [SIGTERM, SIGINT, SIGHUP].map { signal($0, SIG_IGN); return DispatchSource.makeSignalSource(signal: $0) }
        for source in sources {
            source.setEventHandler { [weak self] in self?.request() }
            source.resume()
        }
    }

    /// The group to shut down; asks it at once if a signal came first.
    func attach(_ group: ServiceGroup) {
        let requested = state.withLock { s -> Bool in
            s.group = group
            return s.requested
        }
        if requested { Task { await group.triggerGracefulShutdown() } }
    }

    /// A signal or MPRIS Quit: shuts the group down gracefully (returns at once; the group does the work).
    func request() {
        let (group, first) = state.withLock { s -> (ServiceGroup?, Bool) in
            defer { s.requested = true }
            return (s.group, !s.requested)
        }
        if first { Self.exitAfter(deadline) }
        if let group { Task { await group.triggerGracefulShutdown() } }
    }

    /// On a thread of its own, so that nothing the shutdown waits for can hold it.
    private static func exitAfter(_ deadline: Duration) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: Double(deadline.wholeMilliseconds) / 1000)
            let line = "tonearmd: the shutdown did not end within \(deadline) (an audio output blocked in its device or file?); exiting without it\n"
            _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(3)
        }
        thread.name = "tonearm-limit"
        thread.start()
    }
}

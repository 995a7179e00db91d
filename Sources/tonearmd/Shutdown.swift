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
final class Shutdown: Sendable {
    private struct State {
        var group: ServiceGroup?
        var requested = false
    }

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
        let group = state.withLock { s -> ServiceGroup? in
            s.requested = true
            return s.group
        }
        if let group { Task { await group.triggerGracefulShutdown() } }
    }
}

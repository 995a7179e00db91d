import Dispatch
import Foundation
import Synchronization
import TonearmCore

/// Saves state and ends the run on SIGTERM, SIGINT, SIGHUP or MPRIS Quit.
///
/// Catches the signals from the very start (the daemon owns its bus name before its player exists); a signal that
/// arrives before `attach` is acted on as soon as there is a player to save.
final class Shutdown: Sendable {
    private struct State {
        var player: Player?
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

    /// The player to save and stop; shuts it down at once if a signal came first.
    func attach(_ player: Player) {
        let requested = state.withLock { s -> Bool in
            s.player = player
            return s.requested
        }
        if requested { Task { await player.shutdown() } }
    }

    private func request() {
        let player = state.withLock { s -> Player? in
            s.requested = true
            return s.player
        }
        if let player { Task { await player.shutdown() } }
    }

    /// MPRIS Quit: saves and stops now.
    func run() async {
        let player = state.withLock { s -> Player? in
            s.requested = true
            return s.player
        }
        await player?.shutdown()
    }
}

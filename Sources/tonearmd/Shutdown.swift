import Dispatch
import Foundation
import TonearmCore

/// Saves state and ends the run on SIGTERM, SIGINT, SIGHUP or MPRIS Quit.
final class Shutdown: Sendable {
    let player: Player
    // Dispatch sources are thread-safe; they are only resumed once, here.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]

    init(player: Player) {
        self.player = player
        sources = [SIGTERM, SIGINT, SIGHUP].map { signal($0, SIG_IGN); return DispatchSource.makeSignalSource(signal: $0) }
    }

    func installSignalHandlers() {
        for source in sources {
            source.setEventHandler { [player] in
                Task { await player.shutdown() }
            }
            source.resume()
        }
    }

    func run() async {
        await player.shutdown()
    }
}

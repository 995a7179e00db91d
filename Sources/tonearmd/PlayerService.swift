import ServiceLifecycle
import TonearmCore

/// The player, started (and its saved state restored) before the group runs, so that every other part finds it
/// listening to the engine and reads on the bus are answered while the rest starts; last to stop, when it saves the
/// state (its state writer flushes) and shuts the engine down.
struct PlayerService: DaemonService {
    let player: Player
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        await turn.start()
        // Throws only when the group is cancelled instead: the player stops and saves all the same.
        try? await gracefulShutdown()
        await turn.stop { await player.shutdown() }
    }
}

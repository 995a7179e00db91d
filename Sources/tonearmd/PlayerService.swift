import DBus
import ServiceLifecycle
import TonearmCore

/// The player: first to start, so every other part finds it listening to the engine, and with the saved state
/// restored, so that reads on the bus are answered from it while the rest starts; last to stop, when it saves the
/// state (its state writer flushes) and shuts the engine down.
struct PlayerService: DaemonService {
    let player: Player
    let start: StartQueue
    let connection: DBusConnection
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        await turn.start {
            await player.start()
            await start.restoreEarly(answeringReadsOn: connection)
        }
        // Throws only when the group is cancelled instead: the player stops and saves all the same.
        try? await gracefulShutdown()
        await turn.stop { await player.shutdown() }
    }
}

import DBus
import Logging
import MPRIS
import ServiceLifecycle
import TonearmCore

/// The D-Bus face. In its turn it restores the saved queue, when that waited for the sources, releases the calls held
/// since then, and says in the log that every part before it has started; then it forwards the player's events to the
/// bus until shutdown. The session bus going away ends it, and with it the daemon.
struct BusFaceService: DaemonService {
    let face: MPRISService
    let connection: DBusConnection
    let start: StartQueue
    let turn: StartTurn
    let logger: Logger

    var description: String { turn.name }

    func run() async {
        guard await turn.start({
            await start.finish()
            connection.releaseIncomingCalls()
            logger.info("ready on the session bus as \(MPRISService.busName)")
        }) else { return }
        await cancelWhenGracefulShutdown { [face, connection, logger] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await face.run() }
                group.addTask {
                    await connection.waitUntilClosed()
                    if !Task.isCancelled { logger.notice("the session bus went away; saving state and exiting") }
                }
                await group.next()
                group.cancelAll()
            }
        }
        await turn.stop()
    }
}

import DBus
import Logging
import MPRIS
import ServiceLifecycle
import TonearmCore

/// The D-Bus face. In its turn it restores the saved queue (or queues the command line's files) and releases the calls
/// held since the name was taken; then it forwards the player's events to the bus until shutdown. The session bus
/// going away ends it, and with it the daemon.
struct BusFaceService: DaemonService {
    let face: MPRISService
    let connection: DBusConnection
    let player: Player
    let saved: PersistedState?
    /// The command line's files and URIs.
    let files: [String]
    let turn: StartTurn
    let logger: Logger

    var description: String { turn.name }

    func run() async {
        await turn.start {
            await restore()
            connection.releaseIncomingCalls()
            logger.info("ready on the session bus as \(MPRISService.busName)")
        }
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

    /// The saved queue, or the command line's files in its place (keeping loop, shuffle and volume), playing.
    func restore() async {
        if files.isEmpty {
            if let saved { await player.restore(saved) }
        } else {
            if var saved {
                saved.queue.clear() // keep loop, shuffle, volume; the files replace the queue
                await player.restore(saved)
            }
            let uris = files.map(Tonearmd.uri(for:))
            let (ids, errors) = await player.addSkippingBad(uris, at: .end, replacing: true)
            for error in errors { logger.error("\(error.message)") }
            if let first = ids.first { await player.goTo(first) }
        }
    }
}

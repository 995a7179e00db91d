import MPDProtocol
import Scrobble
import ServiceLifecycle
import UPnP
import Web

/// A network face the daemon listens with once the bus face has restored the queue: the MPD protocol, the web.
protocol NetworkFace: Sendable {
    /// Binds its listeners; one that cannot bind is logged and the daemon runs on without it.
    func start() async
    /// Closes its listeners and its clients' connections.
    func stop() async
}

extension MPDServer: NetworkFace {}
extension WebFace: NetworkFace {}
extension UPnPRenderer: NetworkFace {}
extension Scrobbler: NetworkFace {}

/// A network face listening from its turn until the group shuts down.
struct FaceService<Face: NetworkFace>: DaemonService {
    let face: Face
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        guard await turn.start({ await face.start() }) else { return }
        try? await gracefulShutdown()
        await turn.stop { await face.stop() }
    }
}

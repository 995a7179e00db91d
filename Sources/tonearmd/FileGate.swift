import Foundation
import ServiceLifecycle

/// For tests: a turn in the start order that is taken once a file exists, holding back every service after it.
struct FileGate: DaemonService {
    let path: String
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        // A shutdown meanwhile ends the wait, and the services after it, still waiting for their turn, never start.
        guard await turn.start({
            await cancelWhenGracefulShutdown { [path] in
                while access(path, F_OK) != 0, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            }
        }) else { return }
        try? await gracefulShutdown()
        await turn.stop()
    }
}

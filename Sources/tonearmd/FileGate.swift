import Foundation
import ServiceLifecycle

/// For tests: a turn in the start order that is taken once a file exists, holding back every service after it.
struct FileGate: DaemonService {
    let path: String
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        await turn.start {
            // A shutdown meanwhile ends the wait, so the services after it start and stop in order.
            await cancelWhenGracefulShutdown { [path] in
                while access(path, F_OK) != 0, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            }
        }
        try? await gracefulShutdown()
        await turn.stop()
    }
}

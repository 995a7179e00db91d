import Dispatch
import Foundation
import LocalLibrary
import ServiceLifecycle
import Synchronization
import TonearmCore

/// A turn in the start order, right after the player's: the library index, left closed while the parts were built
/// and the first reads answered, is opened here, before any source starts. One that cannot be opened ends the daemon
/// the graceful way (exit status 2), and `failure` says why.
final class IndexCheck: DaemonService {
    let library: LocalLibrary
    let folder: String
    let turn: StartTurn
    let shutdown: Shutdown
    private let failed = Mutex<String?>(nil)

    init(library: LocalLibrary, folder: String, turn: StartTurn, shutdown: Shutdown) {
        self.library = library
        self.folder = folder
        self.turn = turn
        self.shutdown = shutdown
    }

    var description: String { turn.name }

    /// Why the library index could not be opened, if it could not.
    var failure: String? { failed.withLock { $0 } }

    func run() async {
        guard await turn.start({ [self] in
            // SQLite's open and migration block: off the concurrency pool.
            do {
                try await DispatchQueue.global().run { [library] in try library.openIndex() }
            } catch {
                failed.withLock { $0 = "cannot open the library index in \(folder): \(error)" }
                shutdown.request()
            }
        }) else { return }
        try? await gracefulShutdown()
        await turn.stop()
    }
}

import Logging
import Synchronization

/// The order the daemon's services start in. The group runs them all at once; each takes the next turn and starts only
/// once the service with the turn before it has started. (The group stops them the other way round.)
final class StartOrder: Sendable {
    private let logger: Logger
    private let last = Mutex<Milestone?>(nil)

    init(logger: Logger) {
        self.logger = logger
    }

    /// The turn after the last one handed out, for the service called `name`.
    func next(_ name: String) -> StartTurn {
        let started = Milestone()
        let after = last.withLock { last in
            defer { last = started }
            return last
        }
        return StartTurn(name: name, after: after, started: started, logger: logger)
    }
}

/// A service's place in the start order, and its name in the group and in the debug log.
struct StartTurn: Sendable {
    let name: String
    /// Reached once the service before this one has started; nil for the first.
    let after: Milestone?
    /// Reached once this service has started.
    let started: Milestone
    let logger: Logger

    /// Waits for the service before this one to have started, runs `body`, then lets the next one start. Returns
    /// false, without running `body`, when the daemon shuts down first (a part before it still starting): the group
    /// stops services last-first, so one left waiting for its turn would keep every part before it from stopping.
    @discardableResult
    func start(_ body: () async -> Void = {}) async -> Bool {
        if let after, await !after.wait() {
            logger.debug("not started \(name): shutting down")
            return false
        }
        await body()
        logger.debug("started \(name)")
        started.reach()
        return true
    }

    /// Runs `body` if the service started, then says so in the debug log: `tonearmd --verbose` shows the parts
    /// stopping in reverse order.
    func stop(_ body: () async -> Void = {}) async {
        guard started.isReached else { return }
        await body()
        logger.debug("stopped \(name)")
    }
}

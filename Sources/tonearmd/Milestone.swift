import ServiceLifecycle
import Synchronization

/// A point in the start-up that later parts wait for: reached once, never undone.
final class Milestone: Sendable {
    private struct State {
        var reached = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        /// Waits given up before their continuation was stored (a shutdown at once).
        var givenUp: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Whether it was reached.
    var isReached: Bool { state.withLock { $0.reached } }

    /// Marks it reached and lets every waiter go on.
    func reach() {
        let waiters = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.reached = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Returns true once it is reached (at once if it is), or false as soon as the daemon shuts down before that: a
    /// service still waiting for its turn then never starts, and the services before it can stop in order.
    func wait() async -> Bool {
        let id = state.withLock { s -> UInt64 in
            defer { s.nextID += 1 }
            return s.nextID
        }
        return await withGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer = state.withLock { s -> Bool? in
                    if s.reached { return true }
                    if s.givenUp.remove(id) != nil { return false }
                    s.waiters[id] = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onGracefulShutdown: { [self] in
            let waiter = self.state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard !s.reached else { return nil }
                guard let waiter = s.waiters.removeValue(forKey: id) else {
                    s.givenUp.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume(returning: false)
        }
    }
}

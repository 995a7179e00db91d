import DBus
import ServiceLifecycle
import Synchronization

/// A point in the start-up that later parts wait for: reached once, never undone.
final class Milestone: Sendable {
    private let gate = CallGate(held: true)
    private let reached = Atomic(false)

    /// Whether it was reached.
    var isReached: Bool { reached.load(ordering: .acquiring) }

    /// Marks it reached and lets every waiter go on.
    func reach() {
        reached.store(true, ordering: .releasing)
        gate.release()
    }

    /// Returns true once it is reached (at once if it is), or false as soon as the daemon shuts down before that: a
    /// service still waiting for its turn then never starts, and the services before it can stop in order. (A
    /// shutdown opens the gate without reaching it: its only waiter is the service after, which gives up too.)
    func wait() async -> Bool {
        await withGracefulShutdownHandler {
            _ = await gate.pass()
        } onGracefulShutdown: { [gate] in
            gate.release()
        }
        return isReached
    }
}

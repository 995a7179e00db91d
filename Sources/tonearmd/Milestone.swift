import DBus

/// A point in the start-up that later parts wait for: reached once, never undone.
final class Milestone: Sendable {
    private let gate = CallGate(held: true)

    /// Marks it reached and lets every waiter go on.
    func reach() { gate.release() }

    /// Returns once it is reached (at once if it is).
    func wait() async { await gate.pass() }
}

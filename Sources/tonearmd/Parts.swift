import DBus
import Logging
import ServiceLifecycle
import Synchronization

/// A point in the start-up that later parts wait for: reached once, never undone.
final class Milestone: Sendable {
    private let gate = CallGate(held: true)

    /// Marks it reached and lets every waiter go on.
    func reach() { gate.release() }

    /// Returns once it is reached (at once if it is).
    func wait() async { await gate.pass() }
}

/// One part of the daemon in its service group. The group runs every part at once; each starts only after the part
/// before it has started (so they start in the group's order), then works until the group shuts down gracefully —
/// which it does in the reverse order — and stops.
struct Part: Service, CustomStringConvertible {
    let name: String
    /// Reached by the part before this one once it has started; nil for the first.
    let after: Milestone?
    /// Reached once this part has started.
    let started = Milestone()
    let start: @Sendable () async -> Void
    /// What the part does while it runs, cancelled at graceful shutdown; nil to just wait for it. A part whose work
    /// ends on its own (the bus went away) ends the group the graceful way.
    let work: (@Sendable () async -> Void)?
    let stop: @Sendable () async -> Void

    init(_ name: String, after: Part?, start: @escaping @Sendable () async -> Void = {},
         work: (@Sendable () async -> Void)? = nil, stop: @escaping @Sendable () async -> Void = {}) {
        self.name = name
        self.after = after?.started
        self.start = start
        self.work = work
        self.stop = stop
    }

    var description: String { name }

    func run() async {
        await after?.wait()
        await start()
        started.reach()
        if let work {
            await cancelWhenGracefulShutdown(work)
        } else {
            // Throws only when the group is cancelled instead: the part stops all the same.
            try? await gracefulShutdown()
        }
        await stop()
    }

    /// The group's entry for this part: when it ends on its own, the others shut down gracefully.
    var configuration: ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup,
              failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: name)
    }
}

import Dispatch
import Glibc
import Synchronization

/// The Player's serial executor: its jobs run one at a time on the global queues, as a default actor's would, and a
/// caller on any thread may run a short command in place when the Player has nothing to do (`runNow`), so a bus
/// thread can answer PlayPause without handing it to a task and back.
///
/// Jobs keep their order: `runNow` refuses while a job runs or waits, so nothing it does overtakes an earlier call.
final class PlayerExecutor: SerialExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// Index of the next job in `jobs` (the array is compacted when it drains).
        var head = 0
        /// A drain is scheduled or running, or a caller runs in place.
        var busy = false

        var isEmpty: Bool { head == jobs.count }
    }

    private let state = Mutex(State())
    /// The thread running the Player now (a drain or a caller in place), 0 when none: the isolation check.
    private let owner = Atomic<UInt>(0)

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let start = state.withLock { s -> Bool in
            s.jobs.append(unowned)
            guard !s.busy else { return false }
            s.busy = true
            return true
        }
        if start { scheduleDrain() }
    }

    /// Runs `body` on this thread as the Player, if it has no job running or waiting; nil (and `body` not run) if it
    /// has. Jobs enqueued meanwhile run after it, on the global queues.
    func runNow<T>(_ body: () throws -> T) rethrows -> T? {
        let idle = state.withLock { s -> Bool in
            guard !s.busy, s.isEmpty else { return false }
            s.busy = true
            return true
        }
        guard idle else { return nil }
        owner.store(Self.thisThread, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            let more = state.withLock { s -> Bool in
                guard s.isEmpty else { return true }
                s.busy = false
                return false
            }
            if more { scheduleDrain() }
        }
        return try body()
    }

    func checkIsolated() {
        precondition(isIsolatingCurrentContext() == true, "not running on the Player's executor")
    }

    func isIsolatingCurrentContext() -> Bool? {
        owner.load(ordering: .acquiring) == Self.thisThread
    }

    private func scheduleDrain() {
        DispatchQueue.global().async { self.drain() }
    }

    /// Runs the jobs in order until none is left.
    private func drain() {
        while let job = next() {
            owner.store(Self.thisThread, ordering: .releasing)
            job.runSynchronously(on: asUnownedSerialExecutor())
            owner.store(0, ordering: .releasing)
        }
    }

    private func next() -> UnownedJob? {
        state.withLock { s in
            guard !s.isEmpty else {
                s.jobs.removeAll(keepingCapacity: s.jobs.capacity <= 64)
                s.head = 0
                s.busy = false
                return nil
            }
            defer { s.head += 1 }
            return s.jobs[s.head]
        }
    }

    private static var thisThread: UInt { pthread_self() }
}

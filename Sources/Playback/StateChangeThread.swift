import CLinux
import Foundation

/// The thread that carries out playbin's Play and Pause state changes after the command was answered. It runs below
/// the threads that answer clients (nice +5): a state change takes a few hundred µs of CPU right when the faces' threads
/// are sending the new status, and on a 2-CPU machine the faces waited for it (the WebSocket frame of a pause left
/// 0.1 ms later). The audio itself is unaffected: streaming threads are GStreamer's own.
final class StateChangeThread: @unchecked Sendable {
    /// One for the process: every player's state changes, in the order they were asked.
    static let shared = StateChangeThread(name: "tonearm-state", nice: 5)

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    /// How many jobs were asked for, and how many of them have run.
    private var asked = 0, done = 0

    private init(name: String, nice: Int32) {
        let thread = Thread { [self] in
            _ = tn_name_this_thread(name)
            // Refused (a sandbox), it runs at the daemon's own priority, as before.
            _ = tn_nice_this_thread(nice)
            run()
        }
        thread.start()
    }

    /// Runs `job` on the thread, after the jobs before it.
    func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        asked += 1
        condition.unlock()
        // After the unlock: the thread woken does not find the lock still held.
        condition.broadcast()
    }

    /// Whether a job asked for has not run yet: `settle` would wait now.
    var isBusy: Bool {
        condition.lock()
        defer { condition.unlock() }
        return done < asked
    }

    /// Returns once every job asked for before has run (not those asked for meanwhile).
    func settle() {
        condition.lock()
        let target = asked
        while done < target { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job() }
            condition.lock()
            done += batch.count
            condition.broadcast()
        }
    }
}

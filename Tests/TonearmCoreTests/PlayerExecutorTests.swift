import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TonearmCore

/// An actor on a `PlayerExecutor`, as the Player is: a log of what ran, and a job that holds the executor until let go.
private actor Counter {
    nonisolated let executor = PlayerExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var log: [String] = []
    let holding = Atomic<Bool>(false)

    func note(_ entry: String) { log.append(entry) }

    /// Notes "command" after starting a task that notes "task": the task is enqueued on the executor, so it runs
    /// once the command is done.
    func noteWithTask() {
        Task { self.note("task") }
        note("command")
    }

    /// Runs on the executor without letting go of it (a long queue edit, a slow job) until `release`.
    func hold() {
        holding.store(true, ordering: .sequentiallyConsistent)
        while holding.load(ordering: .sequentiallyConsistent) { usleep(1000) }
        log.append("held")
    }

    nonisolated func release() { holding.store(false, ordering: .sequentiallyConsistent) }
    nonisolated var isHolding: Bool { holding.load(ordering: .sequentiallyConsistent) }

    /// `entry` noted at once on the caller's thread, if the executor is idle.
    nonisolated func noteAtOnce(_ entry: String) -> Bool {
        executor.runNow { assumeIsolated { $0.note(entry) } } != nil
    }
}

@Suite struct PlayerExecutorTests {
    @Test func anIdleExecutorRunsACommandInPlaceAsTheActor() async {
        let counter = Counter()
        await counter.note("first")
        // A plain thread (no task, as a bus thread): the command runs there, isolated to the actor.
        let ranInPlace = await onThread { counter.noteAtOnce("in place") }
        #expect(ranInPlace)
        #expect(await counter.log == ["first", "in place"])
    }

    @Test func aBusyExecutorDeclinesAndKeepsTheOrder() async throws {
        let counter = Counter()
        let held = Task { await counter.hold() }
        let holding = await eventually(timeout: .seconds(20)) { counter.isHolding }
        try #require(holding)
        // While a job runs, nothing runs in place: the caller sends it the usual way, behind what came first.
        #expect(!(await onThread { counter.noteAtOnce("overtaking") }))
        let after = Task { await counter.note("after") }
        counter.release()
        await held.value
        await after.value
        #expect(await counter.log == ["held", "after"])
    }

    @Test func jobsEnqueuedWhileACommandRunsInPlaceRunAfterIt() async {
        let counter = Counter()
        let ran = await onThread { counter.executor.runNow { counter.assumeIsolated { $0.noteWithTask() } } != nil }
        #expect(ran)
        let done = await eventually(timeout: .seconds(20)) { await counter.log.count == 2 }
        #expect(done)
        #expect(await counter.log == ["command", "task"])
        // And the executor is idle again afterwards.
        #expect(await onThread { counter.noteAtOnce("again") })
    }

    @Test func manyCallersInPlaceAndAsyncKeepEveryEntryOnce() async {
        let counter = Counter()
        let inPlace = await withTaskGroup(of: Int.self) { group in
            for i in 0..<200 {
                group.addTask {
                    await counter.note("async \(i)")
                    return 0
                }
                group.addTask { await onThread { counter.noteAtOnce("now \(i)") } ? 1 : 0 }
            }
            return await group.reduce(0, +)
        }
        let log = await counter.log
        #expect(log.count == 200 + inPlace)
        #expect(Set(log).count == log.count)
    }
}

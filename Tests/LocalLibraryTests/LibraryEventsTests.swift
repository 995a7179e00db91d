import Foundation
import Synchronization
import TestSupport
import Testing
@testable import LocalLibrary

/// Subscriptions to the library's events that come and go while events flow.
@Suite struct LibraryEventsTests {
    final class Counters: Sendable {
        let stop = Atomic<Bool>(false)
        let rounds = Atomic<Int>(0)
    }

    /// A subscriber cancelled while the library emits. Cancelling holds the task's status lock while the stream's
    /// termination handler takes the subscribers' lock; an emit that yielded under that lock took them the other way
    /// round, and the two deadlocked (the daemon hung at shutdown now and then: a scan emitting while MPRIS dropped
    /// its subscription). Every round must end.
    @Test func subscribersCancelledWhileEventsFlowNeverDeadlock() async throws {
        let fixture = Fixture()
        let library = try fixture.open()
        let counters = Counters()
        let emitter = Thread {
            while !counters.stop.load(ordering: .relaxed) { library.emit(.changed) }
        }
        emitter.start()
        defer { counters.stop.store(true, ordering: .relaxed) }
        let total = 5_000
        // Not awaited directly: a deadlocked round would hang the test instead of failing it.
        Task.detached {
            for _ in 0..<total {
                let subscription = library.events.subscribe()
                let subscriber = Task { for await _ in subscription {} }
                await Task.yield()
                subscriber.cancel()
                await subscriber.value
                counters.rounds.add(1, ordering: .relaxed)
            }
        }
        let finished = await eventually(timeout: .seconds(120), interval: .milliseconds(50)) {
            counters.rounds.load(ordering: .relaxed) == total
        }
        #expect(finished, "stuck after \(counters.rounds.load(ordering: .relaxed)) of \(total) rounds")
    }
}

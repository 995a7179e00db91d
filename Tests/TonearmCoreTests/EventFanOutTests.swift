import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TonearmCore

@Suite struct EventFanOutTests {
    @Test func everySubscriberGetsEveryEventInOrderWithConsecutiveNumbers() async {
        let fanOut = EventFanOut<Int>()
        let a = fanOut.subscribe(), b = fanOut.subscribe()
        for i in 1...100 { fanOut.publish(i) }
        fanOut.finish()
        var seenA: [Sequenced<Int>] = [], seenB: [Int] = []
        for await item in a { seenA.append(item) }
        for await item in b { seenB.append(item.event) }
        #expect(seenA.map(\.event) == Array(1...100))
        #expect(seenA.map(\.sequence) == (1...100).map(UInt64.init))
        #expect(seenB == Array(1...100))
    }

    /// A subscriber that never reads holds at most its capacity and never holds the publisher; the one that reads
    /// gets everything, each as it is published.
    @Test func aStuckSubscriberDelaysNeitherThePublisherNorAnother() async throws {
        let fanOut = EventFanOut<Int>()
        let stuck = fanOut.subscribe(capacity: 8)
        let live = fanOut.subscribe(capacity: 8)
        let received = Mutex<[Int]>([])
        let reader = Task {
            for await item in live {
                received.withLock { $0.append(item.event) }
                if item.event == 1000 { return }
            }
        }
        for i in 1...1000 {
            fanOut.publish(i)
            // Each event reaches the live reader before the next is published: it is never behind the stuck one.
            try await waitUntil("event \(i) read") { received.withLock { $0.last == i } }
        }
        await reader.value
        #expect(received.withLock { $0 } == Array(1...1000))
        #expect(stuck.backlog == 8)
        #expect(stuck.dropped == 992)
        // What the stuck one still holds is the newest, so it sees the jump in numbers and what came last.
        stuck.cancel()
        #expect(fanOut.subscriberCount == 1)
    }

    @Test func aFullBufferCoalescesWhatMayStandInForTheOlderEvent() async {
        // Even numbers stand for "a state": a newer one replaces an older one still waiting.
        let fanOut = EventFanOut<Int>(coalesces: { older, newer in older % 2 == 0 && newer % 2 == 0 })
        let slow = fanOut.subscribe(capacity: 3)
        for i in [1, 3, 2, 4, 6, 8] { fanOut.publish(i) }
        fanOut.finish()
        var seen: [Sequenced<Int>] = []
        for await item in slow { seen.append(item) }
        #expect(seen.map(\.event) == [1, 3, 8])
        #expect(seen.map(\.sequence) == [1, 2, 6])
        #expect(slow.dropped == 3)
    }

    @Test func aCancelledReaderEndsAndIsForgotten() async throws {
        let fanOut = EventFanOut<Int>()
        let subscription = fanOut.subscribe()
        let reading = Task { () -> Int in
            var count = 0
            for await _ in subscription { count += 1 }
            return count
        }
        fanOut.publish(1)
        reading.cancel()
        _ = await reading.value
        try await waitUntil("the subscription is forgotten") { fanOut.subscriberCount == 0 }
        // Publishing to nobody is fine.
        fanOut.publish(2)
    }

    /// Many readers cancelled while another thread publishes: no deadlock between a task's cancellation and a publish
    /// (the library's stream once deadlocked the daemon's shutdown that way).
    @Test func cancellingWhilePublishingNeverDeadlocks() async {
        let fanOut = EventFanOut<Int>()
        let stop = Atomic<Bool>(false)
        let publisher = Thread {
            var i = 0
            while !stop.load(ordering: .relaxed) {
                i += 1
                fanOut.publish(i)
            }
        }
        publisher.start()
        for _ in 0..<2000 {
            let subscription = fanOut.subscribe(capacity: 4)
            let task = Task { for await _ in subscription {} }
            task.cancel()
            await task.value
        }
        stop.store(true, ordering: .relaxed)
        #expect(fanOut.subscriberCount == 0)
    }

    /// The Player's own fan-out: a face that stopped reading keeps the newest state and misses the rest; a face that
    /// reads hears every change, and every change is in the published state when its call returns.
    @Test func aStuckFaceDelaysNoOtherFaceOfThePlayer() async throws {
        let art = TemporaryDirectory("fan-out-art")
        let player = Player(engine: MachineEngine(), plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url))
        await player.start()
        let stuck = player.events.subscribe(capacity: 4)
        let volumes = Mutex<[Double]>([])
        let live = player.events.subscribe(capacity: 4)
        let reader = Task {
            for await item in live {
                if case .changed(let s) = item.event { volumes.withLock { $0.append(s.volume) } }
            }
        }
        for step in 1...200 {
            let volume = Double(step) / 200
            try await player.setVolume(volume)
            #expect(player.state.snapshot.volume == volume, "read right after the call")
            try await waitUntil("the live face heard volume \(volume)") { volumes.withLock { $0.last == volume } }
        }
        #expect(volumes.withLock { $0.count } >= 200)
        #expect(stuck.backlog == 4)
        #expect(stuck.dropped > 190)
        reader.cancel()
        await player.shutdown()
    }

    @Test func aStateIsReadableBeforeItsEventIsHeard() async {
        let channel = PlayerChannel()
        let subscription = channel.events.subscribe()
        var snapshot = PlayerSnapshot()
        snapshot.volume = 0.25
        channel.publish(snapshot: snapshot, event: .changed(snapshot))
        let first = await subscription.next()
        #expect(first?.sequence == 1)
        #expect(channel.state.sequence == 1)
        #expect(channel.state.snapshot.volume == 0.25)
    }

    /// Listeners get every event, numbered, in order, even when several threads publish at once and one listener
    /// publishes from inside its delivery; none of it waits on another.
    @Test func listenersGetEveryEventInOrderFromManyPublishers() async {
        let fanOut = EventFanOut<Int>()
        let first = Mutex<[Sequenced<Int>]>([]), second = Mutex<[UInt64]>([])
        let a = fanOut.listen { item in
            first.withLock { $0.append(item) }
            // A listener may publish in turn: its event is delivered after this one, by whoever is delivering.
            if item.event == 500 { fanOut.publish(-1) }
        }
        let b = fanOut.listen { item in second.withLock { $0.append(item.sequence) } }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<250 { fanOut.publish(thread * 250 + i + 1) }
        }
        let heard = first.withLock { $0 }
        #expect(heard.map(\.sequence) == (1...1001).map(UInt64.init))
        #expect(Set(heard.map(\.event)) == Set(Array(1...1000) + [-1]))
        #expect(second.withLock { $0 } == (1...1001).map(UInt64.init))
        // Each publisher's own events keep its order.
        for thread in 0..<4 {
            let own = heard.map(\.event).filter { $0 > thread * 250 && $0 <= (thread + 1) * 250 }
            #expect(own == own.sorted())
        }
        a.cancel()
        fanOut.publish(2000)
        #expect(first.withLock { $0.count } == 1001)
        #expect(second.withLock { $0.last } == 1002)
        b.cancel()
    }

    /// Listeners that only wake another thread ask to go first; the rest follow, each group in the order it came,
    /// also after one of them leaves.
    @Test func firstListenersAreHandedEachEventBeforeTheOthers() {
        let fanOut = EventFanOut<Int>()
        let heard = Mutex<[String]>([])
        let encoder = fanOut.listen { item in heard.withLock { $0.append("encoder \(item.event)") } }
        let loopA = fanOut.listen(first: true) { item in heard.withLock { $0.append("loop A \(item.event)") } }
        let other = fanOut.listen { item in heard.withLock { $0.append("other \(item.event)") } }
        let loopB = fanOut.listen(first: true) { item in heard.withLock { $0.append("loop B \(item.event)") } }
        fanOut.publish(1)
        loopA.cancel()
        fanOut.publish(2)
        #expect(heard.withLock { $0 } == ["loop A 1", "loop B 1", "encoder 1", "other 1", "loop B 2", "encoder 2", "other 2"])
        for listener in [encoder, other, loopB] { listener.cancel() }
    }

    /// An event published without delivery (a pause's tick) waits for the next publish (its new status): a listener is
    /// handed both in order, and a listener that only wakes its thread gets both before one that encodes hears either.
    /// Without an event of its own, a publish still delivers what waits.
    @Test func anEventHeldBackGoesOutWithTheNextPublishOneListenerAtATime() {
        let channel = PlayerChannel()
        let heard = Mutex<[String]>([])
        let encoder = channel.events.listen { item in heard.withLock { $0.append("encoder \(item.sequence)") } }
        let loop = channel.events.listen(first: true) { item in heard.withLock { $0.append("loop \(item.sequence)") } }
        channel.publish(position: PositionBasis(position: 5), event: .tick(TrackID(serial: 1), position: 5, length: 10), deliver: false)
        #expect(heard.withLock { $0 }.isEmpty)
        #expect(channel.state.sequence == 1 && channel.state.position.position == 5)
        var paused = PlayerSnapshot()
        paused.status = .paused
        channel.publish(snapshot: paused, event: .changed(paused))
        #expect(heard.withLock { $0 } == ["loop 1", "loop 2", "encoder 1", "encoder 2"])
        channel.publish(event: .seeked(0), deliver: false)
        channel.publish(position: PositionBasis(position: 0))
        #expect(heard.withLock { $0.suffix(2) } == ["loop 3", "encoder 3"])
        for listener in [encoder, loop] { listener.cancel() }
    }

    @Test func aListenerEndsWhenTheFanOutFinishes() async {
        let fanOut = EventFanOut<Int>()
        let listener = fanOut.listen { _ in }
        let waiting = Task { await listener.ended() }
        fanOut.finish()
        await waiting.value
        // One that listens after the end has ended already.
        await fanOut.listen { _ in Issue.record("an event after the end") }.ended()
        fanOut.publish(1)
    }

    /// A listener may read the state its event announces (it is called outside the state's lock) and finds it there.
    @Test func aListenerReadsTheStateItsEventAnnounces() {
        let channel = PlayerChannel()
        let read = Mutex<[(UInt64, Double)]>([])
        let listener = channel.events.listen { item in
            let state = channel.state
            read.withLock { $0.append((item.sequence, state.snapshot.volume)) }
        }
        for volume in [0.25, 0.5] {
            var snapshot = PlayerSnapshot()
            snapshot.volume = volume
            channel.publish(snapshot: snapshot, event: .changed(snapshot))
        }
        #expect(read.withLock { $0.map(\.0) } == [1, 2])
        #expect(read.withLock { $0.map(\.1) } == [0.25, 0.5])
        listener.cancel()
    }

    @Test(arguments: [
        // position, rate, elapsed ms, limit, expected
        (1_000_000 as Int64, 1.0, 500, nil as Int64?, 1_500_000 as Int64),
        (1_000_000, 0.0, 500, nil, 1_000_000),
        (1_000_000, 2.0, 500, nil, 2_000_000),
        (1_000_000, 0.5, 1000, nil, 1_500_000),
        (9_800_000, 1.0, 500, 10_000_000, 10_000_000),
    ])
    func thePositionCountsFromItsBasis(position: Int64, rate: Double, elapsedMs: Int, limit: Int64?, expected: Int64) {
        let start = ContinuousClock.now
        let basis = PositionBasis(position: position, instant: start, rate: rate, limit: limit)
        #expect(basis.position(at: start.advanced(by: .milliseconds(elapsedMs))) == expected)
        #expect(basis.position(at: start) == position)
    }
}

import Foundation
import Playback
import Testing
import TestSupport

/// Behaviour against a clock-synchronised sink (how the daemon really plays).
@Suite("PlaybackEngine in real time")
struct RealTimeTests {
    /// A fresh folder for each test (Swift Testing makes a suite instance per test), removed when it ends.
    let dir = TemporaryDirectory("tonearm-playback")

    @Test("gapless with a synchronised sink: one .started per item, position restarts for the next item")
    func gaplessRealTime() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        // B lasts 2 s: a loaded test that sees B's start late still finds B playing.
        let whole = sine(0..<(3 * 44_100))
        try whole.frames(0..<44_100).write(to: aURL)
        try whole.frames(44_100..<whole.frameCount).write(to: bURL)
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        let log = EventLog(engine)
        let a = item(aURL, 1), b = item(bURL, 2)
        engine.setNextItemProvider { $0 == a ? b : nil }
        let start = ContinuousClock.now
        engine.load(a)
        #expect(await log.waitFor(.started(b)))
        let switchedAfter = ContinuousClock.now - start
        let position = try #require(engine.position)
        let wall = ContinuousClock.now - start
        #expect(engine.currentItem == b)
        #expect(await log.waitFor(.finished(b)))
        let total = ContinuousClock.now - start
        engine.shutdown()
        // Lower bounds only: a synchronised sink cannot be faster than the audio; slowness is not a failure.
        #expect(switchedAfter > .milliseconds(900))
        // B began no sooner than A's 1 s after the load, so its own position is at most the wall time since then; a
        // position counted from A's start would be about 1 s more.
        let ceiling = wall.components.seconds * 1_000_000_000 + wall.components.attoseconds / 1_000_000_000 - 900_000_000
        #expect(position < ceiling, "position should restart for the next item, got \(position) ns \(wall) after the load")
        #expect(total > .milliseconds(2_900))
        #expect(log.events.started == [a, b])
        #expect(log.events.contains(.durationChanged(b, 2_000_000_000)))
        #expect(!log.events.contains(.finished(a)))
        #expect(log.events.states == [.playing])
    }

    @Test("failed hand-over (next item decodes badly) with a synchronised sink: the current item plays to its real end")
    func failedHandOverRealTime() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        try sine(0..<(3 * 22_050)).write(to: aURL) // 1.5 s
        try sine(0..<8_820).write(to: bURL)
        // Looks like Ogg to typefind (so it is handed over) but fails to decode.
        let wav = dir.file("src.wav"), ogg = dir.file("src.ogg")
        try sine(0..<44_100).write(to: wav)
        try await runGst(["filesrc", "location=\(wav.path)", "!", "wavparse", "!", "audioconvert", "!", "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(ogg.path)"])
        let garbageURL = dir.file("truncated.ogg")
        try Data(contentsOf: ogg).prefix(300).write(to: garbageURL)
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        let log = EventLog(engine)
        let a = item(aURL, 1), garbage = item(garbageURL, 2), b = item(bURL, 3)
        engine.setNextItemProvider { $0 == a ? garbage : nil }
        let start = ContinuousClock.now
        engine.load(a)
        // Depending on timing GStreamer reports the bad item before it starts (then A plays to
        // its end and finishes) or just after its stream started (A was heard completely,
        // the bad item fails as the current one). Either way: A is heard to the end, the bad
        // item is reported failed, nothing hangs.
        #expect(await log.wait { events in
            events.contains(.finished(a)) || events.failures.contains { $0.0 == garbage && events.started.contains(garbage) }
        })
        let settledAfter = ContinuousClock.now - start
        #expect(settledAfter > .milliseconds(1_400), "A was cut short: settled after \(settledAfter)")
        #expect(log.events.failures.map(\.0) == [garbage])
        engine.load(b)
        #expect(await log.waitFor(.finished(b)))
        engine.shutdown()
        #expect(log.events.started.first == a)
        #expect(log.events.started.last == b)
    }
}

extension RealTimeTests {
    @Test("the rate carries over a gapless hand-over")
    func rateAcrossGapless() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        try sine(0..<(3 * 44_100)).write(to: aURL)
        try sine(0..<44_100).write(to: bURL)
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        let log = EventLog(engine)
        let a = item(aURL, 1), b = item(bURL, 2)
        engine.setNextItemProvider { $0 == a ? b : nil }
        #expect(engine.setRate(2))
        let start = ContinuousClock.now
        engine.load(a)
        #expect(await log.waitFor(.started(b)))
        let switched = ContinuousClock.now - start
        #expect(await log.waitFor(.finished(b)))
        let total = ContinuousClock.now - start
        engine.shutdown()
        // 3 s + 1 s at 2×.
        // At 2× A must take under its 3 s; at 1× it would take 3 s. (No upper bound: slowness is not a failure.)
        #expect(switched > .milliseconds(1_300), "A took \(switched)")
        #expect(total > .milliseconds(1_800), "A+B took \(total)")
        #expect(log.events.started == [a, b])
        #expect(!log.events.contains { if case .seekCompleted = $0 { return true }; return false })
    }
}

extension RealTimeTests {
    @Test("a seek after the hand-over was prepared stays in the current item")
    func seekAfterAboutToFinish() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        try sine(0..<(4 * 44_100)).write(to: aURL)
        try sine(0..<22_050).write(to: bURL)
        let a = item(aURL, 1), b = item(bURL, 2)
        // Within A's last second about-to-finish has fired; judged by position, not by a sleep. A loaded machine can
        // stall the test past that window (A ends, B starts): then the scenario did not happen, and is set up again.
        var engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        var log = EventLog(engine)
        var late = false
        for attempt in 1...5 {
            if attempt > 1 {
                engine.shutdown()
                engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
                log = EventLog(engine)
            }
            engine.setNextItemProvider { $0 == a ? b : nil }
            engine.load(a)
            #expect(await log.waitFor(.stateChanged(.playing)))
            let current = log
            var missed = false
            _ = await eventually(timeout: .seconds(20), interval: .milliseconds(5)) {
                missed = current.events.contains(.started(b)) || current.events.contains(.finished(a))
                late = !missed && (engine.position ?? 0) >= 3_250_000_000 && !current.events.contains(.started(b))
                return late || missed
            }
            if late { break }
        }
        try #require(late, "A's last second was never caught before B started, in five tries")
        let seekTime = ContinuousClock.now
        #expect(engine.seek(to: 500_000_000))
        #expect(await log.wait { $0.contains { if case .seekCompleted(a, _) = $0 { return true }; return false } })
        #expect(engine.currentItem == a)
        let position = try #require(engine.position)
        // From 0.5 s, at most the time since the seek was sent has played (a loaded test may read it a second
        // later); had the seek gone into B or not been applied, it would read past A's 3.25 s plus that time.
        let sinceSeek = ContinuousClock.now - seekTime
        let ceiling = 500_000_000 + sinceSeek.components.seconds * 1_000_000_000 + sinceSeek.components.attoseconds / 1_000_000_000 + 50_000_000
        #expect(position >= 450_000_000 && position <= ceiling, "position \(position) ns, ceiling \(ceiling) ns")
        // A plays on from 0.5 s; then B follows gaplessly, or (if the item drained inside the
        // seek) A finishes and B is the caller's to load. Never B early.
        #expect(await log.wait { $0.contains(.started(b)) || $0.contains(.finished(a)) })
        let afterSeek = ContinuousClock.now - seekTime
        engine.shutdown()
        #expect(afterSeek > .milliseconds(1_300), "A's remaining 1.5 s were cut short: \(afterSeek)")
        #expect(log.events.started.first == a)
        #expect(log.events.states == [.playing])
    }
}

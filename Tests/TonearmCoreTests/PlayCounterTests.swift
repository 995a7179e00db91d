import Testing
@testable import TonearmCore

/// ListenBrainz's rule as PlayCounter applies it, step by step with no clock but the one given.
@Suite struct PlayCounterTests {
    let t0 = ContinuousClock.now
    let a = TrackID(serial: 1), b = TrackID(serial: 2)

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    /// The listens counted, as (track, seconds heard), and the skips.
    func run(_ steps: [(Double, (inout PlayCounter, ContinuousClock.Instant) -> [PlayCounter.Action])]) -> (counts: [(TrackID, Double)], skips: [TrackID]) {
        var counter = PlayCounter()
        var counts: [(TrackID, Double)] = [], skips: [TrackID] = []
        for (time, step) in steps {
            for action in step(&counter, at(time)) {
                switch action {
                case .count(let id, _, _, let heard): counts.append((id, Double(heard / .milliseconds(1)) / 1000))
                case .skip(let id): skips.append(id)
                }
            }
        }
        return (counts, skips)
    }

    @Test func halfATrackCountsOnce() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 10_000_000, playing: true, at: t) }),
            (4.9, { c, t in c.observe(playing: true, at: t) }),
            (5.0, { c, t in c.observe(playing: true, at: t) }),
            (9.0, { c, t in c.observe(playing: true, at: t) }),
        ])
        #expect(r.counts.map(\.0) == [a])
        #expect(r.counts.first?.1 == 5.0)
        #expect(r.skips.isEmpty)
    }

    /// The engine's reports carry when they happened; on a loaded machine the player handles them late, after looks
    /// of its own (checkpoints at each publication and tick). The count follows the reports' times.
    @Test func lateHandledReportsCountFromWhenTheyHappened() {
        let r = run([
            // A 1 s track: PLAYING seen at 0.1 s but handled at 0.8 s, after a checkpoint made then.
            (0, { c, t in c.started(a, title: nil, length: 1_000_000, playing: false, at: t) }),
            (0.8, { c, t in c.checkpoint(at: t) }),
            (0.1, { c, t in c.observe(playing: true, at: t) }),
            (0.9, { c, t in c.checkpoint(at: t) }),
            // Its end seen at 1.1 s, handled at 1.6 s: nothing after the end counts, and a later Next is no skip.
            (1.1, { c, t in c.ended(at: t) }),
            (1.6, { c, t in c.checkpoint(at: t) }),
            (1.7, { c, t in c.movedOn(at: t, playing: true) }),
        ])
        #expect(r.counts.map(\.0) == [a], "heard from 0.1 s, not from when PLAYING was handled")
        #expect(r.counts.first.map { abs($0.1 - 0.8) < 0.001 } == true, "counted at the checkpoint at 0.9 s: \(r.counts)")
        #expect(r.skips.isEmpty, "a track that played to its end is not a skip")

        // Heard while playing and up to the end the engine saw; a checkpoint after the end adds nothing.
        var counter = PlayCounter()
        _ = counter.started(a, title: nil, length: 10_000_000, playing: false, at: at(0))
        _ = counter.observe(playing: true, at: at(0.1))
        _ = counter.checkpoint(at: at(2))
        _ = counter.ended(at: at(3.1))
        _ = counter.checkpoint(at: at(9))
        #expect(counter.listening?.heard == .seconds(3))
        // A report stamped before the last checkpoint is taken as of that checkpoint: time never runs back.
        var late = PlayCounter()
        _ = late.started(a, title: nil, length: 10_000_000, playing: true, at: at(0))
        _ = late.checkpoint(at: at(2))
        _ = late.observe(playing: false, at: at(1.5))
        _ = late.checkpoint(at: at(5))
        #expect(late.listening?.heard == .seconds(2))
    }

    /// A file queued before its length was read starts as a track of unknown length (4 minutes must be heard); the
    /// pipeline's duration, known a moment later, makes half of it enough, and what was heard before counts.
    @Test func aLengthKnownLateCountsHalfOfIt() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: nil, playing: true, at: t) }),
            (0.1, { c, t in c.lengthChanged(a, to: 4_000_000, at: t) }),
            (1.9, { c, t in c.checkpoint(at: t) }),
            (2.0, { c, t in c.checkpoint(at: t) }),
            (4.0, { c, t in c.ended(at: t) }),
        ])
        #expect(r.counts.map(\.0) == [a])
        #expect(r.counts.first?.1 == 2.0)
        // Known only after more than half was heard: it counts at once.
        let late = run([
            (0, { c, t in c.started(a, title: nil, length: nil, playing: true, at: t) }),
            (3.0, { c, t in c.checkpoint(at: t) }),
            (3.5, { c, t in c.lengthChanged(a, to: 4_000_000, at: t) }),
        ])
        #expect(late.counts.map(\.0) == [a])
        #expect(late.counts.first?.1 == 3.5)
        // Another track's length, or one counted already, changes nothing.
        let other = run([
            (0, { c, t in c.started(a, title: nil, length: 600_000_000, playing: true, at: t) }),
            (1.0, { c, t in c.lengthChanged(b, to: 1_000_000, at: t) }),
            (2.0, { c, t in c.checkpoint(at: t) }),
        ])
        #expect(other.counts.isEmpty)
    }

    @Test func fourMinutesCountALongTrack() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 3_600_000_000, playing: true, at: t) }),
            (239, { c, t in c.observe(playing: true, at: t) }),
            (240, { c, t in c.observe(playing: true, at: t) }),
        ])
        #expect(r.counts.map(\.1) == [240])
    }

    @Test func pausesAndSeeksBreakNothingAndAddNothing() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 10_000_000, playing: true, at: t) }),
            (3, { c, t in c.observe(playing: false, at: t) }),  // paused after 3 s heard
            (100, { c, t in c.observe(playing: true, at: t) }),  // resumed much later: the pause adds nothing
            (101.5, { c, t in c.observe(playing: true, at: t) }),
            // A seek: the pipeline stands a moment (not playing), then plays on from elsewhere.
            (101.5, { c, t in c.observe(playing: false, at: t) }),
            (101.6, { c, t in c.observe(playing: true, at: t) }),
            (102.1, { c, t in c.observe(playing: true, at: t) }),
        ])
        #expect(r.counts.map(\.0) == [a])
        #expect(r.counts.first.map { abs($0.1 - 5.0) < 0.001 } == true, "\(r.counts)")
    }

    @Test func seekingToTheEndIsNoListen() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 10_000_000, playing: true, at: t) }),
            (1, { c, t in c.observe(playing: true, at: t) }),  // 1 s heard, then a seek to 9 s: 1 s more to the end
            (2, { c, t in c.started(b, title: nil, length: 10_000_000, playing: true, at: t) }),
        ])
        #expect(r.counts.isEmpty)
        #expect(r.skips.isEmpty, "the track ended by itself: no skip")
    }

    @Test func movingOnBeforeItCountsIsASkipAfterIsNot() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 10_000_000, playing: true, at: t) }),
            (2, { c, t in c.movedOn(at: t, playing: true) }),
            (2, { c, t in c.started(b, title: nil, length: 10_000_000, playing: true, at: t) }),
            (8, { c, t in c.movedOn(at: t, playing: true) }),
        ])
        #expect(r.skips == [a])
        #expect(r.counts.map(\.0) == [b])
    }

    @Test func aGaplessHandOverCountsEachTrack() {
        let r = run([
            (0, { c, t in c.started(a, title: nil, length: 4_000_000, playing: true, at: t) }),
            (4, { c, t in c.started(b, title: nil, length: 4_000_000, playing: true, at: t) }),
            (8, { c, t in c.stopped(at: t) }),
        ])
        #expect(r.counts.map(\.0) == [a, b])
    }

    @Test func aStreamCountsPerTitle() {
        let r = run([
            (0, { c, t in c.started(a, title: "One", length: nil, playing: true, at: t) }),
            (250, { c, t in c.titleChanged(a, to: "Two", playing: true, at: t) }),
            (260, { c, t in c.titleChanged(a, to: "Two", playing: true, at: t) }),  // the same title again: nothing
            (300, { c, t in c.titleChanged(a, to: "Three", playing: true, at: t) }),
            (600, { c, t in c.observe(playing: true, at: t) }),
        ])
        #expect(r.counts.map(\.0) == [a, a])
        #expect(r.counts.map(\.1) == [250, 300])
    }

    @Test(arguments: [(Int64?.none, 240.0), (0, 240), (30_000_000, 15), (600_000_000, 240), (1_000_000, 0.5)])
    func whatMustBeHeard(_ length: Int64?, _ seconds: Double) {
        #expect(PlayCounter.needed(length: length) == .milliseconds(Int64(seconds * 1000)))
    }
}

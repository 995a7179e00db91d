import Foundation
@testable import Playback
import Testing

/// The playback state machine without GStreamer: each race the history found, as a sequence of inputs and the
/// effects and state that must follow.
@Suite struct PlaybackMachineTests {
    typealias Input = PlaybackMachine.Input
    typealias Effect = PlaybackMachine.Effect

    static let a = PlaybackItem(uri: "file:///a.ogg", token: 1, knownSeekable: true)
    static let b = PlaybackItem(uri: "file:///b.flac", token: 2, knownSeekable: true)
    static let c = PlaybackItem(uri: "file:///c.wav", token: 3, knownSeekable: true)
    static let stream = PlaybackItem(uri: "http://radio/x", token: 9)
    static let s = Int64(1_000_000_000)

    /// The machine plus a fake shell: answers resets and seeks as the real one does, keeps the bus's order of our
    /// markers, and records every effect and event.
    struct Rig {
        var machine = PlaybackMachine(prerollTimeout: .seconds(10))
        var effects: [Effect] = []
        var seekAnswer = true
        /// Our seek markers come through the bus before anything the seek makes the pipeline post.
        var deliverSeekMarkers = true
        var markers: [Input] = []
        let t0 = ContinuousClock.now

        func at(_ seconds: Double) -> ContinuousClock.Instant { t0.advanced(by: .milliseconds(Int(seconds * 1000))) }

        @discardableResult
        mutating func send(_ input: Input) -> Bool {
            let step = machine.handle(input)
            for effect in step.effects { perform(effect) }
            return step.accepted
        }

        mutating func perform(_ effect: Effect) {
            effects.append(effect)
            switch effect {
            case .reset: send(.resetDone)
            case .seek(_, _, let serial):
                if deliverSeekMarkers { send(.seekMarker(serial)) }
                send(.seekIssued(seekAnswer))
            case .postMarker(let gen, let stopped): markers.append(.marker(gen, stopped: stopped))
            case .postRejected(let gen): markers.append(.rejectedMarker(gen))
            default: break
            }
        }

        /// Our markers come through the bus (in order).
        mutating func deliverMarkers() {
            let pending = markers
            markers = []
            for m in pending { send(m) }
        }

        /// Load, marker through, prerolled and started: the usual way to a playing item.
        mutating func play(_ item: PlaybackItem, paused: Bool = false, at position: Int64 = 0) {
            send(.load(item, paused: paused, at: position, now: t0))
            deliverMarkers()
            send(.streamStart(group: UInt32(item.token), duration: 60 * PlaybackMachineTests.s, seekable: true))
            send(.asyncDone(position: 0, duration: 60 * PlaybackMachineTests.s, seekable: true, settled: paused ? .paused : .playing))
        }

        mutating func takeEffects() -> [Effect] {
            defer { effects = [] }
            return effects
        }

        var events: [PlaybackEvent] {
            effects.compactMap { if case .emit(let e) = $0 { return e }; return nil }
        }
        var states: [PlaybackMachine.PipelineState] {
            effects.compactMap { if case .setState(let s) = $0 { return s }; return nil }
        }
        var seeks: [Int64] {
            effects.compactMap { if case .seek(let p, _, _) = $0 { return p }; return nil }
        }
        var started: [PlaybackItem] {
            events.compactMap { if case .started(let i) = $0 { return i }; return nil }
        }
    }

    // MARK: Status and the pipeline agree

    @Test("load: status at once, reset before the marker (NULL would drop it), URI, then the state")
    func loadOrder() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        #expect(r.effects == [.reset(fully: false), .postMarker(1, stopped: false), .setURI(Self.a.uri), .setState(.playing)])
        #expect(r.machine.snapshot.status == .playing)
        #expect(r.machine.snapshot.canSeek, "a local file of known length can seek from the moment it is current")
    }

    @Test("after an error the next load goes through NULL, and READY comes before the marker")
    func errorThenLoadGoesThroughNull() {
        var r = Rig()
        r.play(Self.a)
        r.send(.error(PlaybackError(domain: "stream", code: 7, message: "bad"), now: r.t0))
        #expect(r.events.contains(.failed(Self.a, PlaybackError(domain: "stream", code: 7, message: "bad"))))
        _ = r.takeEffects()
        r.deliverMarkers()
        r.send(.load(Self.b, paused: false, at: 0, now: r.t0))
        let effects = r.takeEffects()
        #expect(effects.first == .reset(fully: false) || effects.first == .reset(fully: true))
        #expect(effects.firstIndex { if case .reset = $0 { return true }; return false }!
                < effects.firstIndex { if case .postMarker = $0 { return true }; return false }!)
    }

    @Test("pause, then two SetPositions while the start seek settles: the pipeline is never set playing again")
    func pauseThenSeeksStaysPaused() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        r.send(.pause(now: r.t0))
        let taken1 = r.send(.seek(20 * Self.s, now: r.t0))
        #expect(taken1, "a seek during preroll is taken")
        _ = r.takeEffects()
        r.send(.streamStart(group: 1, duration: 60 * Self.s, seekable: true))
        r.send(.asyncDone(position: 0, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [20 * Self.s])
        let taken2 = r.send(.seek(20 * Self.s, now: r.t0))
        #expect(taken2, "a second seek while the first settles")
        r.send(.asyncDone(position: 20 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        r.send(.asyncDone(position: 20 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(!r.states.contains(.playing), "paused: the pipeline must not be set playing")
        #expect(r.machine.snapshot.status == .paused)
    }

    @Test("the start seek's end applies the status of that moment", arguments: [
        (PlaybackState.playing, [PlaybackMachine.PipelineState.playing]),
        (PlaybackState.paused, [PlaybackMachine.PipelineState]()),
    ])
    func startSeekEndsInTheCurrentStatus(status: PlaybackState, expected: [PlaybackMachine.PipelineState]) {
        var r = Rig()
        r.send(.load(Self.a, paused: true, at: 5 * Self.s, now: r.t0))
        r.deliverMarkers()
        if status == .playing { r.send(.play(now: r.t0)) }
        r.send(.asyncDone(position: 0, duration: nil, seekable: true, settled: .paused))
        _ = r.takeEffects()
        r.send(.asyncDone(position: 5 * Self.s, duration: nil, seekable: true, settled: .paused))
        #expect(r.states == expected)
    }

    @Test("play during preroll with a start seek waits for it; pause never waits")
    func playWaitsPauseDoesNot() {
        var r = Rig()
        r.send(.load(Self.a, paused: true, at: 5 * Self.s, now: r.t0))
        _ = r.takeEffects()
        r.send(.play(now: r.t0))
        #expect(r.states.isEmpty)
        r.send(.pause(now: r.t0))
        #expect(r.states == [.paused])
    }

    // MARK: Seeks

    @Test("a seek during preroll is applied once prerolled, and Position reads its target meanwhile")
    func seekDuringPreroll() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        let taken3 = r.send(.seek(12 * Self.s, now: r.t0))
        #expect(taken3)
        #expect(r.machine.snapshot.positionOverride == 12 * Self.s)
        #expect(r.states.last == .paused, "held paused until the seek lands")
        r.send(.asyncDone(position: 0, duration: nil, seekable: true, settled: .paused))
        #expect(r.seeks == [12 * Self.s])
        r.send(.asyncDone(position: 12 * Self.s, duration: nil, seekable: true, settled: .paused))
        #expect(r.events.contains(.seekCompleted(Self.a, 12 * Self.s)))
        #expect(r.states.last == .playing)
        #expect(r.machine.snapshot.positionOverride == 12 * Self.s, "landed, not played since: still the target")
        r.send(.settled(.playing, position: 12 * Self.s))
        #expect(r.machine.snapshot.positionOverride == nil, "playing: the pipeline's own position from now on")
    }

    @Test("two quick seeks: Position reads the last target until the seeks settle")
    func quickSeeksReadTheLastTarget() {
        var r = Rig()
        r.play(Self.a)
        let taken4 = r.send(.seek(10 * Self.s, now: r.t0))
        #expect(taken4)
        let taken5 = r.send(.seek(13 * Self.s, now: r.t0))
        #expect(taken5)
        #expect(r.machine.snapshot.positionOverride == 13 * Self.s)
        #expect(r.seeks == [10 * Self.s, 13 * Self.s])
    }

    @Test("an earlier seek's ASYNC_DONE popped after a later seek was issued does not settle the later one")
    func staleAsyncDoneKeepsTheTarget() {
        var r = Rig()
        r.play(Self.a)
        let first = r.send(.seek(0, now: r.t0))
        #expect(first)
        r.deliverSeekMarkers = false
        let second = r.send(.seek(7 * Self.s, now: r.t0))
        #expect(second)
        // The first seek's ASYNC_DONE, popped late, with the pipeline answering from its old running time.
        r.send(.asyncDone(position: 7_870_000_000, duration: nil, seekable: true, settled: .playing))
        #expect(r.machine.snapshot.positionOverride == 7 * Self.s)
        #expect(!r.events.contains { if case .seekCompleted = $0 { return true }; return false })
        // Then the second seek's marker and its own ASYNC_DONE.
        r.send(.seekMarker(r.machine.seekSerial))
        r.send(.asyncDone(position: 7 * Self.s, duration: nil, seekable: true, settled: .playing))
        #expect(r.machine.snapshot.positionOverride == nil)
        #expect(r.events.contains(.seekCompleted(Self.a, 7 * Self.s)))
    }

    @Test("a pause while a seek made in PLAYING is under way: the seek is made again in PAUSED before it settles")
    func pauseDuringASeekSeeksAgain() {
        var r = Rig()
        r.play(Self.a)
        r.send(.seek(30 * Self.s, now: r.t0))
        r.send(.pause(now: r.t0))
        _ = r.takeEffects()
        // The seek's ASYNC_DONE, with the pipeline answering the target plus the running time played before it.
        r.send(.asyncDone(position: 30_870_000_000, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s], "the same target again")
        #expect(r.states.isEmpty)
        #expect(r.events.isEmpty, "no Seeked and no state yet")
        #expect(r.machine.snapshot.positionOverride == 30 * Self.s)
        #expect(r.machine.snapshot.status == .paused)
        r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s], "made again once only")
        #expect(r.machine.snapshot.positionOverride == nil)
        #expect(r.events == [.seekCompleted(Self.a, 30 * Self.s), .stateChanged(.paused)])
    }

    @Test("a seek that settles paused away from its target is made again, once")
    func pausedAwayFromTheTargetSeeksAgainOnce() {
        var r = Rig()
        r.play(Self.a)
        r.send(.pause(now: r.t0))
        r.send(.seek(30 * Self.s, now: r.t0))
        _ = r.takeEffects()
        r.send(.asyncDone(position: 30_345_000_000, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s])
        #expect(r.events.isEmpty)
        #expect(r.machine.snapshot.positionOverride == 30 * Self.s)
        // Wrong again: settled all the same (no loop).
        r.send(.asyncDone(position: 30_345_000_000, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s])
        #expect(r.machine.snapshot.positionOverride == nil)
        #expect(r.events.contains(.seekCompleted(Self.a, 30_345_000_000)))
    }

    @Test("a pause just after a seek settled, before PLAYING came back: paused away from the target, the seek is made again, silently",
          arguments: [Int64(30_305_000_000), 30 * s])
    func pauseBeforePlayingAfterASeek(pausedAt: Int64) {
        var r = Rig()
        r.play(Self.a)
        _ = r.takeEffects()
        r.send(.seek(30 * Self.s, now: r.t0))
        // Settled while playbin is still on its way back to PLAYING (current PAUSED, target PLAYING).
        r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: nil))
        #expect(r.events == [.seekCompleted(Self.a, 30 * Self.s)])
        r.send(.pause(now: r.t0))
        _ = r.takeEffects()
        r.send(.settled(.paused, position: pausedAt))
        guard pausedAt != 30 * Self.s else {
            #expect(r.seeks.isEmpty, "at the target: nothing to mend")
            #expect(r.events == [.stateChanged(.paused)])
            return
        }
        #expect(r.seeks == [30 * Self.s])
        #expect(r.events.isEmpty, "no state until the second seek lands")
        #expect(r.machine.snapshot.positionOverride == 30 * Self.s)
        r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s])
        #expect(r.events == [.stateChanged(.paused)], "one Seeked in all: this seek is silent")
        #expect(r.machine.snapshot.positionOverride == nil)
    }

    @Test("a rate set just after a seek landed, before PLAYING came back, starts from the seek's target, not the pipeline's position")
    func rateAfterALandedSeek() {
        var r = Rig()
        r.play(Self.a)
        r.send(.seek(10 * Self.s, now: r.t0))
        r.send(.asyncDone(position: 10 * Self.s, duration: 60 * Self.s, seekable: true, settled: nil))
        _ = r.takeEffects()
        r.send(.setRate(1.5, position: 300_000_000, now: r.t0))
        #expect(r.seeks == [10 * Self.s])
        #expect(r.machine.snapshot.positionOverride == 10 * Self.s)
    }

    @Test("a landed seek's target stops standing in for the position once playbin is seen playing, message or not")
    func landedEndsWhenSeenPlaying() {
        var r = Rig()
        r.play(Self.a)
        r.send(.seek(10 * Self.s, now: r.t0))
        r.send(.asyncDone(position: 10 * Self.s, duration: 60 * Self.s, seekable: true, settled: nil))
        #expect(r.machine.snapshot.positionOverride == 10 * Self.s)
        #expect(r.machine.isWatching, "the bus thread looks often while a seek has landed")
        _ = r.takeEffects()
        r.send(.tick(now: r.at(0.05), position: 10 * Self.s, playing: false))
        #expect(r.machine.snapshot.positionOverride == 10 * Self.s)
        r.send(.tick(now: r.at(0.1), position: 10_050_000_000, playing: true))
        #expect(r.machine.snapshot.positionOverride == nil)
        #expect(r.events == [.playingOn(Self.a)])
    }

    @Test("a seek followed by PLAYING, then a pause: no second seek whatever the position")
    func playingAfterTheSeekEndsTheWatch() {
        var r = Rig()
        r.play(Self.a)
        r.send(.seek(30 * Self.s, now: r.t0))
        r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: nil))
        r.send(.settled(.playing, position: 30 * Self.s))
        r.send(.pause(now: r.t0))
        _ = r.takeEffects()
        r.send(.settled(.paused, position: 31 * Self.s))
        #expect(r.seeks.isEmpty)
        #expect(r.events == [.stateChanged(.paused)])
    }

    @Test("pause then seek, or a seek that settles before the pause: no second seek", arguments: [true, false])
    func noSecondSeekWithoutAPauseDuringIt(pauseFirst: Bool) {
        var r = Rig()
        r.play(Self.a)
        if pauseFirst {
            r.send(.pause(now: r.t0))
            r.send(.seek(30 * Self.s, now: r.t0))
        } else {
            r.send(.seek(30 * Self.s, now: r.t0))
            r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: .playing))
            r.send(.pause(now: r.t0))
        }
        r.send(.asyncDone(position: 30 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [30 * Self.s])
        #expect(r.events.contains(.seekCompleted(Self.a, 30 * Self.s)))
        #expect(r.machine.snapshot.positionOverride == (pauseFirst ? 30 * Self.s : nil), "paused at a landed seek: its target")
        #expect(!r.machine.isWatching, "held paused, the bus thread does not wake every 50 ms")
    }

    @Test("seeking is refused when the pipeline says the stream cannot, and when stopped")
    func unseekable() {
        var r = Rig()
        r.send(.load(Self.stream, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        #expect(!r.machine.snapshot.canSeek)
        r.send(.asyncDone(position: 0, duration: nil, seekable: false, settled: .playing))
        let taken6 = r.send(.seek(3 * Self.s, now: r.t0))
        #expect(!taken6)
        r.send(.stop)
        let taken7 = r.send(.seek(3 * Self.s, now: r.t0))
        #expect(!taken7)
        #expect(r.machine.snapshot.item == nil && r.machine.snapshot.status == .stopped)
    }

    @Test("a start seek GStreamer refuses starts the item at 0, playing")
    func refusedStartSeek() {
        var r = Rig()
        r.seekAnswer = false
        r.send(.load(Self.stream, paused: false, at: 30 * Self.s, now: r.t0))
        r.deliverMarkers()
        #expect(r.machine.snapshot.positionOverride == 30 * Self.s, "a restart reads the saved position while it opens")
        r.send(.asyncDone(position: 0, duration: nil, seekable: nil, settled: .paused))
        #expect(r.states.last == .playing)
        #expect(r.machine.snapshot.positionOverride == nil)
    }

    @Test("a seek with a hand-over prepared re-opens the item there: no jump into the next, no second start")
    func seekAfterHandOverReloads() {
        var r = Rig()
        r.play(Self.a)
        let (finishing, gen) = r.machine.finishingItem()!
        #expect(finishing == Self.a)
        r.send(.handOver(Self.b, generation: gen))
        _ = r.takeEffects()
        let taken8 = r.send(.seek(5 * Self.s, now: r.t0))
        #expect(taken8)
        #expect(r.effects.contains(.setURI(Self.a.uri)))
        #expect(r.seeks.isEmpty, "no flushing seek into a prepared hand-over")
        r.deliverMarkers()
        r.send(.streamStart(group: 7, duration: nil, seekable: true))
        #expect(r.started.isEmpty, "a reload is not a new start")
    }

    // MARK: Another output

    /// After the shell swapped the sink (playbin went through NULL), the item is re-opened where it was.
    @Test("an output switch re-opens the item at its position, keeps the status, no second start", arguments: [
        (PlaybackState.playing, Bool?.none, PlaybackState.playing, [PlaybackMachine.PipelineState.paused, .playing]),
        (.paused, nil, .paused, [.paused]),
        (.playing, true, .paused, [.paused]),
        (.paused, false, .playing, [.paused, .playing]),
    ])
    func reopenKeepsPositionAndStatus(before: PlaybackState, paused: Bool?, after: PlaybackState, states: [PlaybackMachine.PipelineState]) {
        var r = Rig()
        r.play(Self.a, paused: before == .paused)
        _ = r.takeEffects()
        r.send(.reopen(at: 12 * Self.s, paused: paused, now: r.t0))
        #expect(r.machine.snapshot.status == after, "the status reads as it will be at once")
        #expect(r.machine.snapshot.positionOverride == 12 * Self.s, "Position reads where it was while it re-opens")
        #expect(r.effects.contains(.setURI(Self.a.uri)))
        #expect(r.effects.contains(.reset(fully: false)), "the shell went through NULL already")
        r.deliverMarkers()
        r.send(.streamStart(group: 11, duration: 60 * Self.s, seekable: true))
        r.send(.asyncDone(position: 0, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [12 * Self.s], "prerolled, then to the position")
        r.send(.asyncDone(position: 12 * Self.s, duration: 60 * Self.s, seekable: true, settled: .paused))
        #expect(r.started.isEmpty, "the same item: no new start, so the track id stays")
        #expect(r.states == states, "held paused until the seek landed, then as asked")
        #expect(r.machine.snapshot.positionOverride == 12 * Self.s, "landed, not played since")
        if after == .playing {
            _ = r.takeEffects()
            r.send(.settled(.playing, position: 12 * Self.s))
            #expect(r.machine.snapshot.positionOverride == nil)
            #expect(r.events.last == .playingOn(Self.a), "the override ends with an event, so the faces' position moves")
        }
        #expect(r.machine.snapshot.item == Self.a)
    }

    @Test("an output switch while stopped or after the end only readies the pipeline")
    func reopenWhileIdle() {
        var r = Rig()
        r.send(.reopen(at: 0, paused: nil, now: r.t0))
        #expect(r.effects == [.reset(fully: false)])
        r.play(Self.a)
        r.send(.endOfStream)
        _ = r.takeEffects()
        r.send(.reopen(at: 60 * Self.s, paused: true, now: r.t0))
        #expect(r.effects == [.reset(fully: false)])
        r.send(.play(now: r.t0))
        #expect(r.effects.contains(.setURI(Self.a.uri)), "Play after the end starts the item again, on the new sink")
    }

    @Test("an error from the old sink posted before the switch is not taken for the re-opened item")
    func reopenDropsTheOldSinksError() {
        var r = Rig()
        r.play(Self.a)
        r.send(.reopen(at: 5 * Self.s, paused: true, now: r.t0))
        // The old sink's EPIPE and the upstream flow error were on the bus before the new marker.
        r.send(.error(PlaybackError(domain: "resource", code: 10, message: "Error while writing to file descriptor"), now: r.t0))
        r.send(.error(PlaybackError(domain: "stream", code: 1, message: "Internal data stream error."), now: r.t0))
        #expect(!r.events.contains { if case .failed = $0 { return true }; return false })
        r.deliverMarkers()
        #expect(r.machine.snapshot.item == Self.a)
        #expect(r.machine.snapshot.status == .paused)
    }

    // MARK: Hand-over

    @Test("no hand-over while a seek is decided or a load replaces the item")
    func noHandOverDuringSeekOrLoad() {
        var r = Rig()
        r.play(Self.a)
        var m = r.machine
        _ = m.handle(.seek(3 * Self.s, now: r.t0)) // decided, gst_element_seek not returned yet
        #expect(m.finishingItem() == nil)
        var l = r.machine
        _ = l.handle(.load(Self.c, paused: false, at: 0, now: r.t0)) // before its reset is done
        #expect(l.finishingItem() == nil)
        // A hand-over decided for an older generation is dropped.
        let (_, gen) = r.machine.finishingItem()!
        r.send(.load(Self.c, paused: false, at: 0, now: r.t0))
        #expect(r.machine.handle(.handOver(Self.b, generation: gen)).effects.isEmpty)
    }

    @Test("short tracks: the finishing item is the last one handed over, so the third joins too")
    func chainOfHandOvers() {
        var r = Rig()
        r.play(Self.a)
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        let (finishing, gen2) = r.machine.finishingItem()!
        #expect(finishing == Self.b)
        r.send(.handOver(Self.c, generation: gen2))
        r.send(.streamStart(group: 2, duration: nil, seekable: true))
        r.send(.streamStart(group: 3, duration: nil, seekable: true))
        #expect(r.started == [Self.a, Self.b, Self.c])
        #expect(r.machine.snapshot.item == Self.c)
    }

    @Test("a stale start from an earlier load is dropped until the new marker comes through")
    func staleMessagesDropped() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        r.send(.load(Self.b, paused: false, at: 0, now: r.t0))
        r.send(.streamStart(group: 1, duration: nil, seekable: true)) // A's, popped before B's marker
        r.send(.endOfStream)
        #expect(r.started.isEmpty && !r.events.contains(.finished(Self.a)))
        r.deliverMarkers()
        r.send(.streamStart(group: 2, duration: nil, seekable: true))
        #expect(r.started == [Self.b])
    }

    @Test("a next item refused before the hand-over is reported; the current ends normally")
    func refusedNext() {
        var r = Rig()
        r.play(Self.a)
        let (_, gen) = r.machine.finishingItem()!
        let missing = PlaybackError(domain: "resource", code: 3, message: "Resource not found.")
        r.send(.refuse(Self.b, missing, generation: gen))
        r.deliverMarkers()
        r.send(.endOfStream)
        #expect(r.events.suffix(2) == [.failed(Self.b, missing), .finished(Self.a)])
    }

    @Test("a failed hand-over: the current item drains to its end, then finishes", arguments: [true, false])
    func failedHandOverDrains(reachesEnd: Bool) {
        var r = Rig()
        r.play(Self.a)
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        let bad = PlaybackError(domain: "stream", code: 7, message: "No valid frames")
        r.send(.error(bad, now: r.at(0)))
        r.send(.error(bad, now: r.at(0.1)))
        #expect(r.events.filter { if case .failed = $0 { return true }; return false } == [.failed(Self.b, bad)])
        r.send(.tick(now: r.at(0.2), position: 59 * Self.s))
        #expect(!r.events.contains(.finished(Self.a)))
        if reachesEnd {
            r.send(.tick(now: r.at(1.2), position: 60 * Self.s))
        } else {
            r.send(.tick(now: r.at(0.5), position: 59_500_000_000))
            r.send(.tick(now: r.at(1.5), position: 59_500_000_000))
            #expect(!r.events.contains(.finished(Self.a)))
            r.send(.tick(now: r.at(2.5), position: 59_500_000_000)) // stalled
        }
        #expect(r.events.last == .finished(Self.a))
    }

    @Test("a hand-over that never starts and never fails: given up after 8 s without progress")
    func stalledHandOver() {
        var r = Rig()
        r.play(Self.a)
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        r.send(.tick(now: r.at(0), position: 59 * Self.s))
        r.send(.tick(now: r.at(0.5), position: 60 * Self.s))
        r.send(.tick(now: r.at(2.0), position: 60 * Self.s))
        r.send(.tick(now: r.at(8.0), position: 60 * Self.s))
        #expect(!r.events.contains(.finished(Self.a)), "a loaded machine may take a while to start the next item")
        r.send(.tick(now: r.at(8.6), position: 60 * Self.s))
        let ends = r.events.suffix(2).map { event -> PlaybackItem? in
            if case .failed(let i, _) = event { return i }
            if case .finished(let i) = event { return i }
            return nil
        }
        #expect(ends == [Self.b, Self.a])
    }

    @Test("the rate is carried over a gapless hand-over by a silent seek")
    func rateCarriedOver() {
        var r = Rig()
        r.play(Self.a)
        r.send(.setRate(2, position: 3 * Self.s, now: r.t0))
        r.send(.asyncDone(position: 3 * Self.s, duration: nil, seekable: true, settled: .playing))
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        _ = r.takeEffects()
        r.send(.streamStart(group: 2, duration: nil, seekable: true))
        #expect(r.effects.contains { if case .seek(0, 2, _) = $0 { return true }; return false })
        r.send(.asyncDone(position: 0, duration: nil, seekable: true, settled: .playing))
        #expect(!r.events.contains { if case .seekCompleted = $0 { return true }; return false })
    }

    @Test("an item begun by a hand-over says when (the pipeline may still report the previous one's position); a seek of one's own ends that, the rate carried over does not",
          arguments: [1.0, 2.0])
    func handedOverAt(rate: Double) {
        var r = Rig()
        r.play(Self.a)
        if rate != 1 {
            r.send(.setRate(rate, position: 3 * Self.s, now: r.t0))
            r.send(.asyncDone(position: 3 * Self.s, duration: nil, seekable: true, settled: .playing))
        }
        #expect(r.machine.snapshot.handedOverAt == nil, "loaded, not handed over")
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        let started = r.at(0.5)
        r.send(.streamStart(group: 2, duration: nil, seekable: true, now: started))
        #expect(r.machine.snapshot.item == Self.b)
        #expect(r.machine.snapshot.handedOverAt == started)
        r.send(.seek(10 * Self.s, now: r.t0))
        #expect(r.machine.snapshot.handedOverAt == nil)
    }

    // MARK: Ends and failures

    @Test("an item that does not preroll in time fails and the pipeline is reset")
    func prerollTimeout() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        r.send(.tick(now: r.at(5), position: nil))
        #expect(r.events.isEmpty)
        r.send(.tick(now: r.at(10.5), position: nil))
        #expect(r.events.count == 1)
        #expect(r.effects.contains(.reset(fully: true)))
    }

    @Test("a preroll that keeps making progress is waited for, up to the ceiling; silence from the pipeline ends it")
    func prerollDeadlineMovesWithProgress() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.deliverMarkers()
        // A sign of life at 8 s: 10 s of silence from then on, not from the load.
        r.send(.progress(now: r.at(8)))
        r.send(.tick(now: r.at(12), position: nil))
        #expect(r.events.isEmpty)
        r.send(.tick(now: r.at(18.5), position: nil))
        #expect(r.events.count == 1, "silent for 10.5 s after the last progress")

        // Progress every 5 s holds it open until six timeouts after the load, then it fails however busy it looks.
        var busy = Rig()
        busy.send(.load(Self.a, paused: false, at: 0, now: busy.t0))
        busy.deliverMarkers()
        for second in stride(from: 5.0, through: 55, by: 5) {
            busy.send(.progress(now: busy.at(second)))
            busy.send(.tick(now: busy.at(second + 0.1), position: nil))
        }
        #expect(busy.events.isEmpty)
        busy.send(.progress(now: busy.at(59)))
        busy.send(.tick(now: busy.at(60.1), position: nil))
        #expect(busy.events.count == 1, "the ceiling is 60 s")
        #expect(busy.effects.contains(.reset(fully: true)))
    }

    @Test("progress from before the current load's marker does not move its deadline")
    func staleProgressIsIgnored() {
        var r = Rig()
        r.send(.load(Self.a, paused: false, at: 0, now: r.t0))
        r.send(.progress(now: r.at(9)))
        r.deliverMarkers()
        r.send(.tick(now: r.at(10.5), position: nil))
        #expect(r.events.count == 1)
    }

    @Test("stop: status and position at once, .stopped reported when the marker comes through, play starts again at 0")
    func stopAndPlayAgain() {
        var r = Rig()
        r.play(Self.a)
        r.send(.seek(30 * Self.s, now: r.t0))
        r.send(.stop)
        #expect(r.machine.snapshot == PlaybackMachine.Snapshot(item: nil, status: .stopped, canSeek: false, rate: 1, positionOverride: nil))
        r.deliverMarkers()
        #expect(r.events.last == .stateChanged(.stopped))
        _ = r.takeEffects()
        r.send(.play(now: r.t0))
        #expect(r.effects.contains(.setURI(Self.a.uri)))
        #expect(r.machine.snapshot.status == .playing)
    }

    @Test("EOS while a hand-over is pending: the next load resets through NULL (the next item's group may be broken)")
    func endWithPendingHandOverGoesThroughNull() {
        var r = Rig()
        r.play(Self.a)
        let (_, gen) = r.machine.finishingItem()!
        r.send(.handOver(Self.b, generation: gen))
        r.send(.endOfStream)
        _ = r.takeEffects()
        r.send(.load(Self.c, paused: false, at: 0, now: r.t0))
        #expect(r.effects.first == .reset(fully: true))
    }

    @Test("EOS after the end is reported once; errors after it are ignored")
    func endOnce() {
        var r = Rig()
        r.play(Self.a)
        r.send(.endOfStream)
        r.send(.endOfStream)
        r.send(.error(PlaybackError(domain: "stream", code: 1, message: "late"), now: r.t0))
        #expect(r.events.filter { $0 == .finished(Self.a) }.count == 1)
        #expect(!r.events.contains { if case .failed = $0 { return true }; return false })
    }

    @Test("playbin left in PAUSED while playing is nudged after a second, and fails three seconds after it was seen")
    func pausedWhilePlayingIsNudgedThenFails() {
        var r = Rig()
        r.play(Self.stream)
        _ = r.takeEffects()
        // Seen once, checked again within the second: nothing yet.
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(1)))
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(1.75)))
        #expect(r.states == [])
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(2)))
        #expect(r.states == [.paused, .playing], "PAUSED ends the transition playbin never finishes")
        // It plays: the watch starts over.
        r.send(.stateCheck(current: .playing, target: .playing, now: r.at(2.5)))
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(3)))
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(4)))
        #expect(r.states == [.paused, .playing, .paused, .playing])
        // Still stuck two seconds after the nudge: the item fails, and the pipeline is reset for what comes next.
        _ = r.takeEffects()
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(5)))
        #expect(r.events.isEmpty)
        r.send(.stateCheck(current: .paused, target: .playing, now: r.at(6)))
        #expect(r.events.contains { if case .failed(Self.stream, _) = $0 { true } else { false } }, "\(r.events)")
        #expect(r.effects.contains(.reset(fully: true)))
        // Paused by the user, or buffering, or seeking: PAUSED is what it should be.
        for setUp in [{ (r: inout Rig) in r.send(.pause(now: r.at(4))) },
                      { (r: inout Rig) in r.send(.buffering(percent: 20)) },
                      { (r: inout Rig) in r.send(.seek(5 * Self.s, now: r.at(4))) }] {
            var q = Rig()
            q.play(Self.stream)
            _ = setUp(&q)
            _ = q.takeEffects()
            for t in stride(from: 5.0, through: 9.0, by: 0.5) {
                q.send(.stateCheck(current: .paused, target: .paused, now: q.at(t)))
            }
            #expect(q.states == [])
        }
        // Before the preroll is done, PAUSED is the way there.
        var p = Rig()
        p.send(.load(Self.stream, paused: false, at: 0, now: p.t0))
        p.deliverMarkers()
        _ = p.takeEffects()
        for t in stride(from: 0.5, through: 5.0, by: 0.5) { p.send(.stateCheck(current: .paused, target: .playing, now: p.at(t))) }
        #expect(p.states == [])
    }

    /// A start seek past the end of a short file (a Seek +9 s as a truncated 7.6 s Ogg opened) ends the item at once:
    /// about-to-finish hands the next one over while the start seek is still in flight, and at a rate other than 1
    /// the new stream needs a seek of its own to carry the rate over. That seek takes over the start seek's part:
    /// the pipeline, held in PAUSED for it, plays once it settles (it stayed in PAUSED, the status Playing).
    @Test("a hand-over during a start seek at rate 2 plays once the rate's seek settles")
    func handOverDuringAStartSeekAtAnotherRatePlays() {
        var r = Rig()
        r.send(.setRate(2, position: nil, now: r.t0))
        r.send(.load(Self.a, paused: false, at: 9 * Self.s, now: r.t0))
        r.deliverMarkers()
        r.send(.streamStart(group: 1, duration: 7 * Self.s, seekable: true))
        r.send(.asyncDone(position: 0, duration: 7 * Self.s, seekable: true, settled: .paused))
        #expect(r.seeks == [9 * Self.s], "the start seek is in flight")
        #expect(r.states == [.paused], "held in PAUSED for it")
        r.send(.handOver(Self.b, generation: r.machine.generation))
        r.send(.streamStart(group: 2, duration: 30 * Self.s, seekable: true))
        #expect(r.started == [Self.a, Self.b])
        _ = r.takeEffects()
        // Whichever settles, the old start seek or the rate's seek, the one now in flight brings the pipeline to PLAYING.
        r.send(.asyncDone(position: 0, duration: 30 * Self.s, seekable: true, settled: .paused))
        #expect(r.states == [.playing], "\(r.effects)")
        #expect(r.machine.snapshot.status == .playing)
    }

    /// Nothing can still bring a playbin whose own target is PAUSED to PLAYING: a command was lost on the way (a seek
    /// over a prepared hand-over of a truncated file left it so), and waiting only keeps the listener waiting.
    @Test("playbin at rest in PAUSED while playing is nudged at once")
    func pausedAsTargetWhilePlayingIsNudgedAtOnce() {
        var r = Rig()
        r.play(Self.a)
        _ = r.takeEffects()
        r.send(.stateCheck(current: .paused, target: .paused, now: r.at(1)))
        #expect(r.states == [.paused, .playing])
        // One nudge; if that does not do it either, the item fails three seconds after it was first seen.
        _ = r.takeEffects()
        r.send(.stateCheck(current: .paused, target: .paused, now: r.at(2)))
        #expect(r.states == [] && r.events.isEmpty)
        r.send(.stateCheck(current: .paused, target: .paused, now: r.at(4)))
        #expect(r.events.contains { if case .failed(Self.a, _) = $0 { true } else { false } }, "\(r.events)")
    }

    @Test("buffering pauses the pipeline and resumes it, while the status stays Playing")
    func buffering() {
        var r = Rig()
        r.play(Self.stream)
        _ = r.takeEffects()
        r.send(.buffering(percent: 10))
        r.send(.buffering(percent: 60))
        r.send(.buffering(percent: 100))
        #expect(r.states == [.paused, .playing])
        #expect(r.machine.snapshot.status == .playing)
        #expect(r.events == [.buffering(Self.stream, 10), .buffering(Self.stream, 60), .buffering(Self.stream, 100)],
                "each new fill level is reported once, for the item")
    }

    @Test("buffering levels: repeats are not reported, a pause meanwhile is kept, a new item starts full")
    func bufferingLevels() {
        var r = Rig()
        r.play(Self.stream)
        _ = r.takeEffects()
        r.send(.buffering(percent: 40))
        r.send(.buffering(percent: 40))
        r.send(.pause(now: r.t0))
        r.send(.buffering(percent: 100))
        #expect(r.events == [.buffering(Self.stream, 40), .buffering(Self.stream, 100)])
        #expect(r.states == [.paused, .paused], "full again while paused by the user: it stays paused")
        #expect(r.machine.snapshot.status == .paused)
        _ = r.takeEffects()
        r.play(Self.a)
        _ = r.takeEffects()
        r.send(.buffering(percent: 100))
        #expect(r.events.isEmpty, "a new item starts at 100: nothing to report")
    }
}

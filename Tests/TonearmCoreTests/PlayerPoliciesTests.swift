import Foundation
import Testing
import Lyrics
@testable import TonearmCore

/// The player's policies without the player: each is a value that takes what happened (and `now`) and returns
/// actions, checked here by tables.
@Suite struct StreamReconnectorTests {
    static let radio = TrackID(serial: 7)
    static let other = TrackID(serial: 8)
    static let t0 = ContinuousClock.now
    static func at(_ s: Double) -> ContinuousClock.Instant { t0.advanced(by: .milliseconds(Int(s * 1000))) }
    static let policy = StreamReconnectPolicy(attempts: 3, firstDelay: .seconds(1), maximumDelay: .seconds(3), stallTimeout: .seconds(15))

    /// A reconnector that heard `radio` start at t0.
    static func heard() -> StreamReconnector {
        var r = StreamReconnector(policy: policy)
        _ = r.started(radio, now: t0)
        return r
    }

    @Test("drops: only a live stream that was heard is reconnected, with waits 1, 2, 3 (capped) s, then given up",
          arguments: [
            // (live, heard, drops, expected last drop)
            (false, true, 1, StreamReconnector.Drop.notLive),
            (true, false, 1, .notLive),
            (true, true, 1, .reconnecting(attempt: 1, delay: .seconds(1))),
            (true, true, 2, .reconnecting(attempt: 2, delay: .seconds(2))),
            (true, true, 3, .reconnecting(attempt: 3, delay: .seconds(3))),
            (true, true, 4, .gaveUp(attempts: 3)),
          ])
    func drops(live: Bool, heard: Bool, drops: Int, expected: StreamReconnector.Drop) {
        var r = heard ? Self.heard() : StreamReconnector(policy: Self.policy)
        var last = StreamReconnector.Drop.notLive
        for n in 1...drops {
            let (drop, actions) = r.dropped(Self.radio, live: live, now: Self.at(Double(n)))
            last = drop
            if case .reconnecting(let attempt, let delay) = drop {
                #expect(actions.contains(.schedule(.reconnect(attempt: attempt), after: delay)))
                #expect(r.level == 0, "the buffer shows empty while it reconnects")
                // The timer fires; the stream is reloaded and drops again at once (it never starts).
                do {
                    let value = r.reconnectDue(attempt: attempt, current: Self.radio, playing: true)
                    #expect(value == [.reload(Self.radio)])
                }
            }
        }
        #expect(last == expected)
    }

    @Test("the same drop reported twice (the stall timer and the source's error) is one attempt")
    func oneDropOneAttempt() {
        var r = Self.heard()
        _ = r.dropped(Self.radio, live: true, now: Self.at(1))
        do {
            let value = r.dropped(Self.radio, live: true, now: Self.at(1.1)).0
            #expect(value == .alreadyReconnecting)
        }
        #expect(r.attempts == 1)
    }

    @Test("a stream heard for 20 s has recovered: the next drop counts from one again")
    func recovery() {
        var r = Self.heard()
        _ = r.dropped(Self.radio, live: true, now: Self.at(1))
        _ = r.reconnectDue(attempt: 1, current: Self.radio, playing: true)
        do {
            let value = r.started(Self.radio, now: Self.at(2)).reconnected
            #expect(value)
        }
        do {
            let value = r.dropped(Self.radio, live: true, now: Self.at(30)).0
            #expect(value == .reconnecting(attempt: 1, delay: .seconds(1)))
        }
    }

    @Test("a reconnect timer that fires late changes nothing", arguments: [
        ("paused meanwhile", true, false, false),
        ("another track current", false, true, false),
        ("cancelled", true, true, true),
    ])
    func lateTimer(_ what: String, sameTrack: Bool, playing: Bool, cancel: Bool) {
        var r = Self.heard()
        _ = r.dropped(Self.radio, live: true, now: Self.at(1))
        if cancel { #expect(r.cancelReconnect() == [.cancel(.reconnect)]) }
        do {
            let value = r.reconnectDue(attempt: 1, current: sameTrack ? Self.radio : Self.other, playing: playing).isEmpty
            #expect(value, "\(what)")
        }
    }

    @Test("the stall watch: started by an empty buffer, restarted only by a new high, ended by a full one")
    func stallWatch() {
        var r = StreamReconnector(policy: Self.policy)
        let first = r.newLiveStream(Self.radio)
        #expect(first == [.bufferingChanged(Self.radio, 0), .schedule(.stall(generation: 1), after: .seconds(15))])
        do {
            let value = r.buffering(Self.radio, 34).contains
            #expect(value(.schedule(.stall(generation: 2), after: .seconds(15))))
        }
        let swing = r.buffering(Self.radio, 20)
        #expect(swing == [.bufferingChanged(Self.radio, 20)], "a level that only swings is no progress")
        #expect(!r.isStalled(generation: 1), "an older timer")
        #expect(r.isStalled(generation: 2))
        do {
            let value = r.buffering(Self.radio, 100)
            #expect(value == [.bufferingChanged(Self.radio, 100), .cancel(.stall)])
        }
        #expect(!r.isStalled(generation: 2))
    }
}

@Suite struct OutputRecoveryTests {
    static let t0 = ContinuousClock.now
    static let policy = OutputRecoveryPolicy(attempts: 2, interval: .seconds(1))

    @Test("a lost output: held paused when it was playing, retried every interval, given up after the attempts",
          arguments: [(true, true), (false, false)])
    func lostThenRetried(wasPlaying: Bool, playingNow: Bool) {
        var r = OutputRecovery(policy: Self.policy)
        let (_, actions) = r.failed("kitchen", message: "write: Broken pipe", wasPlaying: wasPlaying, playingNow: playingNow, now: Self.t0)
        #expect(actions.contains(.pauseEngine) == playingNow)
        #expect(actions.contains(.scheduleRetry(after: .seconds(1))))
        #expect(r.problem == "kitchen: write: Broken pipe; reconnecting")
        do {
            let value = r.retryDue()
            #expect(value == [.open])
        }
        do {
            let value = r.retryOpened(.failure(OutputFailure(message: "refused")), sameOutput: true, name: "kitchen", now: Self.t0).actions
            #expect(value
                == [.scheduleRetry(after: .seconds(1))])
        }
        do {
            let value = r.retryDue()
            #expect(value == [.open])
        }
        let (gaveUp, last) = r.retryOpened(.failure(OutputFailure(message: "refused")), sameOutput: true, name: "kitchen", now: Self.t0)
        #expect(gaveUp && last == [.problemChanged("kitchen: refused; gave up after 2 attempts (Play tries again)")])
        // Play after giving up tries again at once.
        do {
            let value = r.playPressed()
            #expect(value == [.scheduleRetry(after: .zero)])
        }
        do {
            let value = r.retryDue()
            #expect(value == [.open])
        }
        let back = r.retryOpened(.success(()), sameOutput: true, name: "kitchen", now: Self.t0).actions
        #expect(back == [.use(paused: false), .problemChanged("")], "Play came meanwhile: it plays on")
        #expect(!r.lost)
    }

    @Test("back: resumes as it was (playing, or paused when Pause came meanwhile)", arguments: [false, true])
    func resumesAsItWas(pausedMeanwhile: Bool) {
        var r = OutputRecovery(policy: Self.policy)
        _ = r.failed("snap", message: "gone", wasPlaying: true, playingNow: false, now: Self.t0)
        if pausedMeanwhile { r.pausePressed() }
        _ = r.retryDue()
        do {
            let value = r.retryOpened(.success(()), sameOutput: true, name: "snap", now: Self.t0).actions
            #expect(value.first == .use(paused: pausedMeanwhile))
        }
    }

    @Test("one open at a time: a switch while a retry opens is refused; a retry due while a switch opens waits")
    func oneOpenAtATime() {
        var r = OutputRecovery(policy: Self.policy)
        _ = r.failed("snap", message: "gone", wasPlaying: false, playingNow: false, now: Self.t0)
        do {
            let value = r.retryDue()
            #expect(value == [.open])
        }
        do {
            let value = r.switchStarts()
            #expect(!value)
        }
        do {
            let value = r.retryOpened(.failure(OutputFailure(message: "x")), sameOutput: true, name: "snap", now: Self.t0).actions
            #expect(value
                == [.scheduleRetry(after: .seconds(1))])
        }
        do {
            let value = r.switchStarts()
            #expect(value)
        }
        do {
            let value = r.retryDue()
            #expect(value == [.scheduleRetry(after: .seconds(1))], "a switch is opening")
        }
        do {
            let value = r.switchOpened(succeeded: true)
            #expect(value == [.cancelRetry, .use(paused: true), .problemChanged("")])
        }
    }

    @Test("a retry's result after a switch elsewhere is stale")
    func staleRetry() {
        var r = OutputRecovery(policy: Self.policy)
        _ = r.failed("snap", message: "gone", wasPlaying: true, playingNow: false, now: Self.t0)
        _ = r.retryDue()
        do {
            let value = r.retryOpened(.success(()), sameOutput: false, name: "snap", now: Self.t0).actions
            #expect(value.isEmpty)
        }
    }

    @Test("failing again within 10 s of coming back goes on counting attempts", arguments: [(5.0, true), (15.0, false)])
    func failingAgainSoon(after seconds: Double, again: Bool) {
        var r = OutputRecovery(policy: Self.policy)
        _ = r.failed("snap", message: "gone", wasPlaying: true, playingNow: false, now: Self.t0)
        _ = r.retryDue()
        _ = r.retryOpened(.success(()), sameOutput: true, name: "snap", now: Self.t0)
        let (soon, _) = r.failed("snap", message: "gone", wasPlaying: true, playingNow: false,
                                 now: Self.t0.advanced(by: .milliseconds(Int(seconds * 1000))))
        #expect(soon == again)
        #expect(r.attempts == (again ? 1 : 0))
    }
}

@Suite struct FailureSkipperTests {
    static let a = TrackID(serial: 1), b = TrackID(serial: 2), c = TrackID(serial: 3)

    @Test("the loaded entry fails: skip on, until as many failed in a row as the queue holds", arguments: [
        (1, FailureSkipper.Decision.skip), (2, .skip), (3, .halt),
    ])
    func failuresInARow(failures: Int, expected: FailureSkipper.Decision) {
        var s = FailureSkipper()
        var last = FailureSkipper.Decision.passOver
        for id in [Self.a, Self.b, Self.c].prefix(failures) { last = s.failed(id, loaded: true, queueCount: 3) }
        #expect(last == expected)
    }

    @Test("a hand-over that failed (not loaded) is passed over but stops nothing; a play in between resets the row")
    func notLoadedAndHeard() {
        var s = FailureSkipper()
        #expect(s.failed(Self.b, loaded: false, queueCount: 2) == .passOver)
        #expect(s.skips(Self.b))
        _ = s.failed(Self.a, loaded: true, queueCount: 2)
        s.heard()
        #expect(s.failed(Self.c, loaded: true, queueCount: 2) == .skip, "the row starts over")
        s.forgive(Self.b)
        #expect(!s.skips(Self.b), "picked again: tried again")
        s.forgiveAll()
        #expect(!s.skips(Self.a) && !s.skips(Self.c))
    }
}

@Suite struct TickScheduleTests {
    @Test("ticks run exactly while playing; a restart starts a new cadence and the old timer stops counting")
    func followsTheStatus() {
        var t = TickSchedule(interval: .seconds(1))
        #expect(t.follow(playing: false).isEmpty)
        #expect(t.follow(playing: true) == [.start(generation: 1, every: .seconds(1))])
        #expect(t.follow(playing: true).isEmpty, "already ticking")
        #expect(t.fired(generation: 1, playing: true, pipelinePlaying: true) == (true, [.tick]))
        #expect(t.fired(generation: 1, playing: true, pipelinePlaying: false) == (true, []), "promised playing, not moving yet")
        t.setInterval(.milliseconds(250))
        #expect(t.restart() == [.start(generation: 2, every: .milliseconds(250))])
        #expect(t.fired(generation: 1, playing: true, pipelinePlaying: true).goesOn == false, "an old timer")
        #expect(t.follow(playing: false) == [.stop])
        #expect(t.fired(generation: 3, playing: false, pipelinePlaying: false).goesOn == false)
    }

    @Test("a timer that fires after the status left Playing ends the ticks; the next Play starts them again")
    func firesAfterPause() {
        var t = TickSchedule(interval: .seconds(1))
        _ = t.follow(playing: true)
        #expect(t.fired(generation: 1, playing: false, pipelinePlaying: false).goesOn == false)
        #expect(!t.running)
        #expect(t.follow(playing: true) == [.start(generation: 2, every: .seconds(1))])
    }
}

@Suite struct LyricsFollowerTests {
    static let song = TrackID(serial: 4), other = TrackID(serial: 5)
    static let timed = Lyrics(lines: [LyricLine(start: 1_000_000, text: "one"), LyricLine(start: 3_000_000, text: "two")], source: .lrc)

    @Test("a new track drops the old lyrics, announces no line and looks its own up")
    func newTrack() {
        var f = LyricsFollower()
        let first = f.current(Self.song, canLookUp: true)
        #expect(first.contains { if case .lookUp(Self.song) = $0 { true } else { false } })
        _ = f.found(Self.song, Self.timed)
        let next = f.current(Self.other, canLookUp: false)
        #expect(next.contains { if case .lyricsChanged(Self.other, nil) = $0 { true } else { false } })
        #expect(next.contains { if case .lineChanged(Self.other, -1, -1, "") = $0 { true } else { false } })
        #expect(!next.contains { if case .lookUp = $0 { true } else { false } })
        #expect(f.found(Self.song, Self.timed).isEmpty, "a late lookup for a track no longer current")
    }

    @Test("the line at the position is announced once; while playing a timer is set for the next line, at the rate",
          arguments: [(0, 1.0, Int64(1_000_000)), (1_500_000, 1.0, 1_500_000), (1_500_000, 2.0, 750_000), (3_500_000, 1.0, -1)])
    func lines(position: Int64, rate: Double, wait: Int64) {
        var f = LyricsFollower()
        _ = f.current(Self.song, canLookUp: true)
        _ = f.found(Self.song, Self.timed)
        let actions = f.follow(position: position, playing: true, rate: rate)
        let scheduled = actions.compactMap { if case .schedule(_, let us) = $0 { us } else { nil } }
        #expect(scheduled == (wait < 0 ? [] : [wait]))
        let again = f.follow(position: position, playing: true, rate: rate)
        #expect(!again.contains { if case .lineChanged = $0 { true } else { false } }, "announced once")
        let paused = f.follow(position: position, playing: false, rate: rate)
        #expect(!paused.contains { if case .schedule = $0 { true } else { false } }, "no timer while paused")
    }
}

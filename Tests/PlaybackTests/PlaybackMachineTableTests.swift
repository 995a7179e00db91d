import Foundation
@testable import Playback
import Testing

/// Every state the playback machine can reach × every input, generated: states are found by exploring from a new
/// machine with the whole input alphabet (a shell answering at once, and one that has not answered yet), and each
/// pair is checked against the rules that hold for all of them.
@Suite struct PlaybackMachineTableTests {
    typealias Input = PlaybackMachine.Input
    typealias Effect = PlaybackMachine.Effect

    static let a = PlaybackItem(uri: "file:///a.ogg", token: 1, knownSeekable: true)
    static let b = PlaybackItem(uri: "file:///b.flac", token: 2, knownSeekable: true)
    static let stream = PlaybackItem(uri: "http://radio/x", token: 9)
    static let s = Int64(1_000_000_000)
    static let t0 = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0.advanced(by: .milliseconds(Int(seconds * 1000))) }

    /// One input of the alphabet: a name for the table, and the input as the machine's present state makes it (a
    /// hand-over names the current generation, a seek marker the latest serial).
    struct Letter: CustomStringConvertible, Sendable {
        let description: String
        let make: @Sendable (PlaybackMachine) -> Input
    }

    static let alphabet: [Letter] = {
        var letters: [Letter] = []
        func add(_ name: String, _ make: @escaping @Sendable (PlaybackMachine) -> Input) { letters.append(Letter(description: name, make: make)) }
        add("load") { _ in .load(a, paused: false, at: 0, now: t0) }
        add("load paused at 5 s") { _ in .load(a, paused: true, at: 5 * s, now: t0) }
        add("load a stream") { _ in .load(stream, paused: false, at: 0, now: t0) }
        add("reload at 3 s") { _ in .load(a, paused: false, at: 3 * s, reload: true, now: t0) }
        add("play") { _ in .play(now: t0) }
        add("pause") { _ in .pause(now: t0) }
        add("stop") { _ in .stop }
        add("reopen") { _ in .reopen(at: 3 * s, paused: nil, now: t0) }
        add("reopen paused") { _ in .reopen(at: 3 * s, paused: true, now: t0) }
        add("seek 10 s") { _ in .seek(10 * s, now: t0) }
        add("rate 2") { _ in .setRate(2, position: 4 * s, now: t0) }
        add("rate 1") { _ in .setRate(1, position: 4 * s, now: t0) }
        add("reset done") { _ in .resetDone }
        add("seek issued") { _ in .seekIssued(true) }
        add("seek refused") { _ in .seekIssued(false) }
        add("hand over") { m in .handOver(b, generation: m.generation) }
        add("hand over, stale") { m in .handOver(b, generation: m.generation &- 1) }
        add("refuse") { m in .refuse(b, PlaybackError(domain: "resource", code: 3, message: "missing"), generation: m.generation) }
        add("marker") { m in .marker(m.generation, stopped: false) }
        add("stop marker") { m in .marker(m.generation, stopped: true) }
        add("rejected marker") { m in .rejectedMarker(m.generation) }
        add("seek marker") { m in .seekMarker(m.seekSerial) }
        add("settled paused at the target") { m in .settled(.paused, position: m.snapshot.positionOverride ?? 10 * s) }
        add("settled paused away") { _ in .settled(.paused, position: 13 * s) }
        add("settled playing") { _ in .settled(.playing, position: 10 * s) }
        add("settled ready") { _ in .settled(.ready, position: 0) }
        add("async done, on the way") { _ in .asyncDone(position: 10 * s, duration: 60 * s, seekable: true, settled: nil) }
        add("async done paused away") { _ in .asyncDone(position: 13 * s, duration: 60 * s, seekable: true, settled: .paused) }
        add("async done playing") { _ in .asyncDone(position: 10 * s, duration: 60 * s, seekable: true, settled: .playing) }
        add("async done, unseekable") { _ in .asyncDone(position: 0, duration: nil, seekable: false, settled: .playing) }
        add("stream start") { _ in .streamStart(group: 1, duration: 60 * s, seekable: true) }
        add("stream start, next group") { _ in .streamStart(group: 2, duration: 30 * s, seekable: true) }
        add("duration") { _ in .durationChanged(61 * s) }
        add("tags") { _ in
            var tags = StreamTags()
            tags.title = "T"
            return .tags(tags)
        }
        add("EOS") { _ in .endOfStream }
        add("error") { _ in .error(PlaybackError(domain: "stream", code: 7, message: "bad"), now: at(0.5)) }
        add("buffering 40") { _ in .buffering(percent: 40) }
        add("buffering 100") { _ in .buffering(percent: 100) }
        add("progress") { _ in .progress(now: at(5)) }
        add("tick") { _ in .tick(now: at(0.2), position: 59 * s) }
        add("tick 2 s on") { _ in .tick(now: at(2), position: 59 * s) }
        add("tick 4 s on") { _ in .tick(now: at(4), position: 59 * s) }
        add("tick at the end") { _ in .tick(now: at(1), position: 60 * s) }
        add("tick past the deadline") { _ in .tick(now: at(11), position: nil) }
        add("tick, playbin playing") { _ in .tick(now: at(0.3), position: 10 * s, playing: true) }
        add("state check") { _ in .stateCheck(current: .paused, target: .playing, now: at(0)) }
        add("state check 1.5 s on") { _ in .stateCheck(current: .paused, target: .playing, now: at(1.5)) }
        add("state check 4 s on") { _ in .stateCheck(current: .paused, target: .playing, now: at(4)) }
        add("state check, playing") { _ in .stateCheck(current: .playing, target: .playing, now: at(5)) }
        return letters
    }()

    /// A state's shape, for telling states apart: the case, its sub-states, and what the shell owes it.
    static func shape(_ m: PlaybackMachine) -> String {
        func handOver(_ h: PlaybackMachine.HandOver) -> String {
            switch h {
            case .clear: return "clear"
            case .pending(let items, let watch): return "pending \(min(items.count, 2))\(watch == nil ? "" : " watched")"
            case .draining: return "draining"
            }
        }
        var shape: String
        switch m.state {
        case .idle: shape = "idle"
        case .finished: shape = "finished"
        case .prerolling(let p): shape = "prerolling(start seek: \(p.startSeek != nil), hand-over: \(handOver(p.handOver)))"
        case .running(let r):
            let seek: String
            switch r.seek {
            case .none: seek = "none"
            case .issuing(let f): seek = "issuing\(f.atStart ? " at start" : "")\(f.pausedDuring ? " paused during" : "")\(f.repeated ? " repeated" : "")"
            case .inFlight(let f): seek = "in flight\(f.atStart ? " at start" : "")\(f.pausedDuring ? " paused during" : "")\(f.repeated ? " repeated" : "")"
            case .landed: seek = "landed"
            }
            shape = "running(seek: \(seek), hand-over: \(handOver(r.handOver)), buffering: \(r.buffering), stuck: \(r.stuck.map { $0.nudged ? "nudged" : "yes" } ?? "no"))"
        }
        shape += " status \(m.status)"
        if m.awaitingReset { shape += ", reset owed" }
        if m.busGeneration != m.generation { shape += ", marker on its way" }
        return shape
    }

    /// Feeds `input` and, when `answer`, answers as the shell does at once (resets, seeks, markers through the bus).
    static func feed(_ m: inout PlaybackMachine, _ input: Input, answer: Bool) -> PlaybackMachine.Step {
        let step = m.handle(input)
        guard answer else { return step }
        for effect in step.effects {
            switch effect {
            case .reset: _ = feed(&m, .resetDone, answer: true)
            case .seek(_, _, let serial):
                _ = feed(&m, .seekIssued(true), answer: true)
                _ = feed(&m, .seekMarker(serial), answer: true)
            case .postMarker(let gen, let stopped): _ = feed(&m, .marker(gen, stopped: stopped), answer: true)
            case .postRejected(let gen): _ = feed(&m, .rejectedMarker(gen), answer: true)
            default: break
            }
        }
        return step
    }

    /// Every state shape reachable from a new machine, with one machine in it.
    static let reachable: [String: PlaybackMachine] = {
        var found: [String: PlaybackMachine] = [:]
        var frontier = [PlaybackMachine(prerollTimeout: .seconds(10))]
        found[shape(frontier[0])] = frontier[0]
        while !frontier.isEmpty {
            var next: [PlaybackMachine] = []
            for machine in frontier {
                for letter in alphabet {
                    let input = letter.make(machine)
                    guard machine.impossibility(of: input) == nil else { continue }
                    for answer in [true, false] {
                        var m = machine
                        _ = feed(&m, input, answer: answer)
                        let key = shape(m)
                        if found[key] == nil {
                            found[key] = m
                            next.append(m)
                        }
                    }
                }
            }
            frontier = next
        }
        return found
    }()

    @Test("the exploration reaches every state and sub-state the machine has")
    func everyStateIsReached() {
        let shapes = Array(Self.reachable.keys)
        for part in ["idle", "finished", "prerolling(start seek: true", "prerolling(start seek: false",
                     "seek: none", "seek: issuing", "seek: in flight", "seek: in flight at start", "paused during", "repeated",
                     "seek: landed", "hand-over: clear", "hand-over: pending 1", "hand-over: pending 2", "watched",
                     "hand-over: draining", "buffering: true", "stuck: yes", "stuck: nudged", "reset owed", "marker on its way"] {
            #expect(shapes.contains { $0.contains(part) }, "no reachable state has \(part)")
        }
        #expect(shapes.count > 60, "\(shapes.count) shapes")
    }

    @Test("every state × every input: the answer is taken only when owed, and the rules every state keeps hold after it")
    func everyStateTimesEveryInput() {
        var pairs = 0
        for (shape, machine) in Self.reachable.sorted(by: { $0.key < $1.key }) {
            for letter in Self.alphabet {
                let input = letter.make(machine)
                let issuing = machine.state.running?.seek.isIssuing ?? false
                let owed: Bool
                switch input {
                case .seekIssued: owed = issuing
                case .resetDone: owed = machine.awaitingReset
                default: owed = true
                }
                #expect((machine.impossibility(of: input) == nil) == owed, "\(shape) × \(letter)")
                guard owed else { continue }
                pairs += 1
                var m = machine
                let step = Self.feed(&m, input, answer: false)
                Self.checkRules(before: machine, input: input, step: step, after: m, "\(shape) × \(letter)")
            }
        }
        #expect(pairs > 2000)
        print("PlaybackMachineTableTests: \(Self.reachable.count) state shapes, \(pairs) pairs checked")
    }

    static func checkRules(before: PlaybackMachine, input: Input, step: PlaybackMachine.Step, after m: PlaybackMachine,
                           _ pair: String) {
        let snapshot = m.snapshot
        // What clients read is consistent.
        if snapshot.status == .stopped { #expect(snapshot.item == nil && snapshot.positionOverride == nil, "\(pair)") }
        // The shortcut a command's way to its reply reads says what the snapshot says.
        #expect(m.itemToken == snapshot.item?.token, "\(pair)")
        if snapshot.positionOverride != nil { #expect(m.state.seekUnderWay || m.state.hasLanded, "\(pair): a position override without a seek") }
        let prerolling: Bool = { if case .prerolling = m.state { true } else { false } }()
        // A load from the start reads 0 until it plays; a start at a position reads that position.
        if snapshot.item != nil {
            #expect(snapshot.prerollingFromStart == (prerolling && snapshot.positionOverride == nil), "\(pair)")
        }
        // Every load starts a generation of its own, also for the same item: a position kept for one never serves another.
        if case .load = input, snapshot.item != nil { #expect(snapshot.generation > before.snapshot.generation, "\(pair)") }
        #expect(m.isWatching == (m.state.handOver.map { $0 != .clear } ?? false || prerolling || (m.state.hasLanded && m.status == .playing)), "\(pair)")
        if case .pending(let items, _)? = m.state.handOver { #expect(!items.isEmpty, "\(pair): an empty hand-over") }
        // No hand-over while the shell owes an answer or a seek is being issued.
        if m.finishingItem() != nil {
            #expect(!m.awaitingReset && !(m.state.running?.seek.isIssuing ?? false), "\(pair): a hand-over may be made now")
        }
        // An effect that the shell answers leaves the machine waiting for that answer.
        if step.effects.contains(where: { if case .reset = $0 { true } else { false } }) { #expect(m.awaitingReset, "\(pair)") }
        if step.effects.contains(where: { if case .seek = $0 { true } else { false } }) {
            #expect(m.state.running?.seek.isIssuing == true, "\(pair): a seek effect, and no seek issuing")
        }
        // Messages from before the latest load or stop change nothing.
        let fromPipeline: Bool
        switch input {
        case .settled, .asyncDone, .streamStart, .durationChanged, .tags, .endOfStream, .error, .buffering, .tick, .stateCheck:
            fromPipeline = true
        default:
            fromPipeline = false
        }
        if fromPipeline, before.busGeneration != before.generation {
            #expect(step.effects.isEmpty && m.state == before.state && m.snapshot == before.snapshot, "\(pair): a stale message acted")
        }
        switch input {
        case .stop:
            #expect(m.state == .idle && snapshot.status == .stopped, "\(pair)")
            #expect(step.effects.contains(.postMarker(m.generation, stopped: true)), "\(pair)")
        case .load(_, let paused, let position, _, _):
            guard case .prerolling = m.state else { Issue.record("\(pair): not opening"); return }
            #expect(snapshot.status == (paused ? .paused : .playing), "\(pair)")
            if position > 0 { #expect(snapshot.positionOverride == position, "\(pair)") }
        case .seek(let target, _):
            if step.accepted { #expect(snapshot.positionOverride == target, "\(pair): an accepted seek does not read its target") }
            else { #expect(m.state == before.state, "\(pair): a refused seek changed the state") }
        case .pause:
            if before.currentItem != nil { #expect(snapshot.status == .paused || before.state == .idle || before.state == .finished, "\(pair)") }
            if case .running = before.state { #expect(step.effects.contains(.setState(.paused)), "\(pair)") }
        case .play:
            // Never set playing while a start seek is still to land or the buffer is low.
            var mustWait = false
            if case .running(let r) = m.state { mustWait = r.seek.flight?.atStart == true || r.buffering }
            if case .prerolling(let p) = m.state { mustWait = p.startSeek != nil }
            if mustWait { #expect(!step.effects.contains(.setState(.playing)), "\(pair)") }
        default:
            break
        }
    }
}

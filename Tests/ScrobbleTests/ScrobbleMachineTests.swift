import Foundation
import Testing
import TonearmCore
@testable import Scrobble

/// The submission queue's rules, as tables of events in and actions out: no I/O, no clock.
@Suite struct ScrobbleMachineTests {
    typealias M = ScrobbleMachine

    static func listen(_ n: Int) -> QueuedListen {
        QueuedListen(id: "l\(n)", listen: ScrobbleListen(listenedAt: 1_700_000_000 + Int64(n) * 300, artist: "A", title: "T\(n)"))
    }
    static let policy = M.Policy(batchSize: 3, retryDelay: .seconds(1), maximumRetryDelay: .seconds(4))

    enum Event {
        case loaded([Int], uncertain: [Int])
        case queued(Int)
        case answered(M.Outcome)
        case timer
    }

    /// What was sent, as "kind:ids", and the other actions in short.
    static func short(_ actions: [M.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .send(let listens, let kind): "\(kind.rawValue):" + listens.map(\.id).joined(separator: ",")
            case .forget(let ids): "forget:" + ids.joined(separator: ",")
            case .setAside(let listen, _): "aside:" + listen.id
            case .wait(let d): "wait:\(d.components.seconds)"
            case .announce(let l): "announce:" + l.title
            }
        }
    }

    static func run(_ events: [Event]) -> (M, [[String]]) {
        var m = M(policy: policy)
        var out: [[String]] = []
        for event in events {
            switch event {
            case .loaded(let ns, let uncertain):
                out.append(short(m.loaded(ns.map(listen), uncertain: Set(uncertain.map { "l\($0)" }))))
            case .queued(let n): out.append(short(m.queued(listen(n))))
            case .answered(let o): out.append(short(m.answered(o)))
            case .timer: out.append(short(m.timerFired()))
            }
        }
        return (m, out)
    }

    static let cases: [(String, [Event], [[String]])] = [
        ("a listen is sent alone and forgotten once accepted",
         [.queued(1), .answered(.accepted)],
         [["single:l1"], ["forget:l1"]]),
        ("listens that come while one is under way wait, then go as one batch",
         [.queued(1), .queued(2), .queued(3), .answered(.accepted), .answered(.accepted)],
         [["single:l1"], [], [], ["forget:l1", "import:l2,l3"], ["forget:l2,l3"]]),
        ("catching up goes in batches of batch-size, oldest first",
         [.loaded([1, 2, 3, 4, 5], uncertain: []), .answered(.accepted), .answered(.accepted)],
         [["import:l1,l2,l3"], ["forget:l1,l2,l3", "import:l4,l5"], ["forget:l4,l5"]]),
        ("unreachable: nothing reached the server, so the batch stays a batch; the backoff doubles up to its maximum",
         [.loaded([1, 2], uncertain: []), .answered(.unreachable("refused")), .timer, .answered(.unreachable("refused")),
          .timer, .answered(.unreachable("refused")), .timer, .answered(.unreachable("refused")), .timer, .answered(.accepted)],
         [["import:l1,l2"], ["wait:1"], ["import:l1,l2"], ["wait:2"], ["import:l1,l2"], ["wait:4"], ["import:l1,l2"], ["wait:4"],
          ["import:l1,l2"], ["forget:l1,l2"]]),
        ("a batch that failed (500, no answer) may be stored in part: its listens go alone, behind fresh ones",
         [.loaded([1, 2], uncertain: []), .answered(.failed("HTTP 500")), .queued(3), .timer,
          .answered(.accepted), .answered(.accepted), .answered(.accepted)],
         [["import:l1,l2"], ["wait:1"], [], ["single:l3"], ["forget:l3", "single:l1"], ["forget:l1", "single:l2"], ["forget:l2"]]),
        ("a listen whose request was under way at a crash goes alone; the others still batch",
         [.loaded([1, 2, 3], uncertain: [1]), .answered(.accepted), .answered(.accepted)],
         [["single:l1"], ["forget:l1", "import:l2,l3"], ["forget:l2,l3"]]),
        ("a listen the server keeps failing on never holds the others back",
         [.queued(1), .answered(.failed("HTTP 500")), .queued(2), .timer, .answered(.accepted),
          .answered(.failed("HTTP 500")), .timer, .answered(.accepted)],
         [["single:l1"], ["wait:1"], [], ["single:l2"], ["forget:l2", "single:l1"], ["wait:1"], ["single:l1"], ["forget:l1"]]),
        ("a refused batch is sent one by one; the one refused alone is set aside and the queue goes on",
         [.loaded([1, 2], uncertain: []), .answered(.refused(status: 400, message: "bad")), .answered(.refused(status: 400, message: "bad")),
          .answered(.accepted)],
         [["import:l1,l2"], ["single:l1"], ["aside:l1", "single:l2"], ["forget:l2"]]),
        ("a refused token keeps everything and backs off like any failure",
         [.queued(1), .answered(.unauthorized(status: 401)), .timer, .answered(.unauthorized(status: 401)), .timer, .answered(.accepted)],
         [["single:l1"], ["wait:1"], ["single:l1"], ["wait:2"], ["single:l1"], ["forget:l1"]]),
        ("no listen is sent while a retry is awaited; the timer sends them all",
         [.queued(1), .answered(.unreachable("down")), .queued(2), .queued(3), .timer, .answered(.accepted)],
         [["single:l1"], ["wait:1"], [], [], ["import:l1,l2,l3"], ["forget:l1,l2,l3"]]),
        ("an answer with nothing under way changes nothing",
         [.answered(.accepted), .queued(1)],
         [[], ["single:l1"]]),
    ]

    @Test(arguments: 0..<cases.count)
    func table(_ index: Int) {
        let (name, events, expected) = Self.cases[index]
        let (_, out) = Self.run(events)
        #expect(out == expected, "\(name)")
    }

    @Test func nothingIsForgottenUnlessAccepted() {
        // Whatever the server does, every listen is either forgotten after an acceptance or set aside after a refusal.
        let (m, _) = Self.run([.loaded([1, 2, 3, 4], uncertain: [2]), .answered(.failed("x")), .timer, .answered(.unreachable("y")),
                               .timer, .answered(.unauthorized(status: 403))])
        #expect(m.pendingCount == 4)
    }

    @Test func playingNowOnlyWhileTheServerAnswers() {
        var m = M(policy: Self.policy)
        let now = ScrobbleListen(listenedAt: 0, artist: "A", title: "Now")
        #expect(Self.short(m.nowPlaying(now)) == ["announce:Now"])
        _ = m.queued(Self.listen(1))
        _ = m.answered(.failed("HTTP 500"))
        #expect(m.nowPlaying(now).isEmpty)
        _ = m.timerFired()
        _ = m.answered(.accepted)
        #expect(Self.short(m.nowPlaying(now)) == ["announce:Now"])
    }

    @Test func outcomesOfHTTPStatuses() {
        #expect(ListenBrainzClient.outcome(status: 200, body: "{\"status\":\"ok\"}") == .accepted)
        #expect(ListenBrainzClient.outcome(status: 401, body: "") == .unauthorized(status: 401))
        #expect(ListenBrainzClient.outcome(status: 400, body: "{\"code\":400,\"error\":\"Invalid JSON\"}")
                == .refused(status: 400, message: "Invalid JSON"))
        if case .failed = ListenBrainzClient.outcome(status: 503, body: "") {} else { Issue.record("503 is a failure to retry") }
        if case .failed = ListenBrainzClient.outcome(status: 429, body: "") {} else { Issue.record("429 is a failure to retry") }
        // A wrong URL is not the listens' fault: they stay queued.
        if case .unreachable = ListenBrainzClient.outcome(status: 404, body: "") {} else { Issue.record("404 keeps the listens") }
    }
}

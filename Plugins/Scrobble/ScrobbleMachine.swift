/// The submission queue as a plain value: events in (listens queued, a server's answer, the retry timer, what plays
/// now), actions out (send, forget what was accepted, set aside what was refused, wait). No I/O: `Scrobbler` performs
/// the actions, and the journal has written a listen before the machine hears of it.
///
/// Rules, so that a listen is never lost and never sent twice by us:
/// - One request at a time. A listen leaves the queue only when the server accepted the request that held it.
/// - Fresh listens go in batches (`import`, up to `batchSize`). A batch whose fate is unknown (no answer in time, the
///   connection dropped, a 5xx) may have been stored in part: Maloja stores a batch's listens one by one and, meeting
///   one it already has, answers "ok" without storing the rest. So each of its listens is then sent alone (`single`),
///   where a duplicate costs nothing. A request that never reached the server (connection refused) keeps its batch.
/// - A listen that failed goes behind the fresh ones, so one the server keeps failing on (Maloja answers 500 to a
///   listen at the same second as another it has) never holds the others back; it stays queued and is retried.
/// - A 4xx for a batch: the server refused something in it; its listens are sent alone to find which. A 4xx for one
///   listen alone: it is set aside (kept in a file, logged), never retried, never blocking the queue.
/// - 401/403: the token is refused; everything stays queued, retried with the same backoff, said once in the log.
/// - Every failure waits `retryDelay`, doubling up to `maximumRetryDelay`; an accepted request resets it.
struct ScrobbleMachine: Sendable, Equatable {
    struct Policy: Sendable, Equatable {
        var batchSize = 100
        var retryDelay: Duration = .seconds(15)
        var maximumRetryDelay: Duration = .seconds(1800)
    }

    /// How a request ended.
    enum Outcome: Sendable, Equatable {
        /// 2xx.
        case accepted
        /// 401 or 403: the token.
        case unauthorized(status: Int)
        /// Any other 4xx but 408 and 429: the server will not take what was sent.
        case refused(status: Int, message: String)
        /// 5xx, 408, 429, a timeout, a connection dropped after sending: the server may or may not have stored it.
        case failed(String)
        /// The request never reached the server (connection refused, no route, name not found).
        case unreachable(String)
    }

    enum Action: Sendable, Equatable {
        /// Send these listens in one request (the journal notes "sending" first, so a crash meanwhile makes their fate
        /// unknown at the next start).
        case send([QueuedListen], ListenBrainzPayload.Kind)
        /// The server took them: remove from the queue.
        case forget([String])
        /// Refused alone: keep it apart, with the reason, and remove it from the queue.
        case setAside(QueuedListen, reason: String)
        /// Arm the retry timer.
        case wait(Duration)
        /// Tell the server what plays now (once, never retried or queued).
        case announce(ScrobbleListen)
    }

    struct Entry: Sendable, Equatable {
        var listen: QueuedListen
        /// Requests that held it and failed.
        var failures = 0
        /// Sent only by itself (its fate after a request is unknown, or it was in a refused batch).
        var alone = false
    }

    let policy: Policy
    private(set) var pending: [Entry] = []
    /// The ids of the request under way.
    private(set) var inFlight: [String]?
    /// The retry timer is armed.
    private(set) var waiting = false
    /// Failures in a row (0: the server answered the last request).
    private(set) var failures = 0
    private(set) var unauthorized = false

    init(policy: Policy) { self.policy = policy }

    var pendingCount: Int { pending.count }
    /// Listens that must go alone (their fate after a request is unknown).
    var mustGoAlone: Set<String> { Set(pending.filter { $0.alone || $0.failures > 0 }.map(\.listen.id)) }

    /// The queue as the journal left it; `uncertain`: listens a request was under way for when the daemon stopped.
    mutating func loaded(_ listens: [QueuedListen], uncertain: Set<String>) -> [Action] {
        pending = listens.map { Entry(listen: $0, alone: uncertain.contains($0.id)) }
        return next()
    }

    /// A listen written to the journal.
    mutating func queued(_ listen: QueuedListen) -> [Action] {
        pending.append(Entry(listen: listen))
        return next()
    }

    /// What plays now: announced while the server answers (not while waiting to retry).
    func nowPlaying(_ listen: ScrobbleListen) -> [Action] {
        waiting || failures > 0 ? [] : [.announce(listen)]
    }

    mutating func timerFired() -> [Action] {
        waiting = false
        return next()
    }

    /// The answer to the request under way.
    mutating func answered(_ outcome: Outcome) -> [Action] {
        guard let ids = inFlight else { return [] }
        inFlight = nil
        let sent = Set(ids)
        var actions: [Action] = []
        switch outcome {
        case .accepted:
            pending.removeAll { sent.contains($0.listen.id) }
            actions.append(.forget(ids))
            failures = 0
            unauthorized = false
        case .refused(let status, let message):
            failures = 0
            unauthorized = false
            if ids.count == 1, let entry = pending.first(where: { $0.listen.id == ids[0] }) {
                pending.removeAll { $0.listen.id == ids[0] }
                actions.append(.setAside(entry.listen, reason: "HTTP \(status): \(message)"))
            } else {
                update(sent) { $0.alone = true }
            }
        case .unauthorized:
            unauthorized = true
            return actions + backOff()
        case .failed:
            update(sent) {
                $0.alone = true
                $0.failures += 1
            }
            return actions + backOff()
        case .unreachable:
            return actions + backOff()
        }
        return actions + next()
    }

    /// The wait before the next attempt after `failures` failures in a row.
    func delay(afterFailures n: Int) -> Duration {
        var delay = policy.retryDelay
        for _ in 1..<max(1, n) where delay < policy.maximumRetryDelay { delay = delay * 2 }
        return min(delay, policy.maximumRetryDelay)
    }

    private mutating func backOff() -> [Action] {
        failures += 1
        waiting = true
        return [.wait(delay(afterFailures: failures))]
    }

    private mutating func update(_ ids: Set<String>, _ change: (inout Entry) -> Void) {
        for i in pending.indices where ids.contains(pending[i].listen.id) { change(&pending[i]) }
    }

    /// The next request, when none is under way and no retry is awaited: the listen that failed least (oldest first)
    /// alone if it must go alone, else the fresh listens in a batch.
    private mutating func next() -> [Action] {
        guard inFlight == nil, !waiting, !pending.isEmpty else { return [] }
        let order = pending.indices.sorted { (pending[$0].failures, $0) < (pending[$1].failures, $1) }
        let first = pending[order[0]]
        let batch: [QueuedListen]
        if first.alone || first.failures > 0 {
            batch = [first.listen]
        } else {
            let entries = pending
            batch = order.map { entries[$0] }.prefix { !$0.alone && $0.failures == 0 }.prefix(policy.batchSize).map(\.listen)
        }
        inFlight = batch.map(\.id)
        return [.send(batch, batch.count == 1 ? .single : .import)]
    }
}

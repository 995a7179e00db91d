import AsyncHTTPClient
import Foundation
import Logging
import TonearmCore

/// Scrobbling to a ListenBrainz-compatible server (ListenBrainz, Maloja, Koito): follows the player's events, sends
/// "playing now" when a track starts to be heard and queues each listen that counts on disk before sending it
/// (ScrobbleJournal.swift), in batches when catching up. The rules are the machine's (ScrobbleMachine.swift); this
/// actor only does the I/O. Playback never waits on it.
public actor Scrobbler {
    let settings: ScrobbleSettings
    let logger: Logger
    let environment: [String: String]
    private let subscription: EventSubscription<PlayerEvent>
    private var machine: ScrobbleMachine
    private let journal: ScrobbleJournal
    private var client: ListenBrainzClient?
    private var http: HTTPClient?
    /// Following the player's events; the request under way (one at a time); the retry timer.
    private var following: Task<Void, Never>?
    private var request: Task<Void, Never>?
    private var timer: Task<Void, Never>?
    private var lastProblem = ""
    /// The problem last said in the log at warning level.
    private var loggedProblem = ""

    /// Subscribes to `events` at once, so that nothing counted before `start` is missed.
    public init(settings: ScrobbleSettings, events: EventFanOut<PlayerEvent>, storageFolder: URL, logger: Logger,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.settings = settings
        self.logger = logger
        self.environment = environment
        subscription = events.subscribe(capacity: 4096)
        machine = ScrobbleMachine(policy: .init(batchSize: settings.batchSize, retryDelay: .seconds(settings.retryDelay),
                                                maximumRetryDelay: .seconds(settings.maximumRetryDelay)))
        journal = ScrobbleJournal(folder: storageFolder)
    }

    /// Listens waiting to be sent.
    public var pendingCount: Int { machine.pendingCount }

    /// Reads the token and the queue and starts sending; without a token it says why once and stays off.
    public func start() async {
        let token: String
        do {
            token = try settings.token(environment: environment)
        } catch {
            logger.error("scrobbling is off: \(error.message)")
            subscription.cancel()
            return
        }
        let contents: ScrobbleJournal.Contents
        do {
            contents = try journal.open()
        } catch {
            logger.error("scrobbling is off: cannot keep its queue in \(journal.folder.path): \(error)")
            subscription.cancel()
            return
        }
        let http = ListenBrainzClient.makeHTTPClient(timeout: settings.timeout)
        self.http = http
        client = ListenBrainzClient(http: http, url: settings.url, token: token, timeout: settings.timeout)
        if contents.skipped > 0 { logger.warning("scrobble queue: skipped \(contents.skipped) unreadable line(s) (a write cut short)") }
        logger.info("scrobbling to \(settings.url.absoluteString); \(contents.pending.count) listen(s) queued")
        perform(machine.loaded(contents.pending, uncertain: contents.uncertain))
        let subscription = subscription
        following = Task { [weak self] in
            var last: UInt64?
            for await item in subscription {
                if let last, item.sequence > last + 1 { await self?.missed(item.sequence - last - 1) }
                last = item.sequence
                await self?.handle(item.event)
            }
        }
    }

    /// Stops following the player; what is queued stays on disk for the next start.
    public func stop() async {
        subscription.cancel()
        timer?.cancel()
        following?.cancel()
        request?.cancel()
        try? await http?.shutdown()
        http = nil
        client = nil
    }

    private func missed(_ count: UInt64) {
        // Only a stalled disk could make the scrobbler fall this far behind; what the player counted then is lost.
        logger.warning("scrobbling fell behind the player: \(count) event(s) missed")
    }

    private func handle(_ event: PlayerEvent) {
        guard client != nil else { return }
        switch event {
        case .listened(let listen):
            guard let scrobble = ScrobbleListen(listen) else {
                logger.debug("not scrobbled (no artist or title): \(listen.uri)")
                return
            }
            let queued = QueuedListen(listen: scrobble)
            do {
                try journal.add(queued)
            } catch {
                logger.error("scrobble queue: \(error); sending \(scrobble.title) without keeping it")
            }
            perform(machine.queued(queued))
        case .nowPlaying(_, let metadata):
            if let playing = ScrobbleListen(playing: metadata) { perform(machine.nowPlaying(playing)) }
        default:
            break
        }
    }

    private func perform(_ actions: [ScrobbleMachine.Action]) {
        defer { compactIfLong() }
        for action in actions {
            switch action {
            case .send(let listens, let kind):
                do { try journal.sending(listens.map(\.id)) } catch { logger.error("scrobble queue: \(error)") }
                guard let client else { return }
                request = Task { [weak self] in
                    let outcome = await client.submit(kind, listens.map(\.listen))
                    await self?.answered(outcome, count: listens.count)
                }
            case .forget(let ids):
                do { try journal.done(ids) } catch { logger.error("scrobble queue: \(error)") }
            case .setAside(let listen, let reason):
                logger.warning("the server refused a listen (\(listen.listen.artist) – \(listen.listen.title)): \(reason); kept in \(journal.rejectedFile.path), not sent again")
                do { try journal.setAside(listen, reason: reason) } catch { logger.error("scrobble queue: \(error)") }
            case .wait(let delay):
                // Said once per problem (an offline day is one line, not one per retry); each retry at debug level.
                let line = "scrobbling: \(lastProblem); \(machine.pendingCount) listen(s) queued, retrying in \(delay)"
                if lastProblem != loggedProblem { logger.warning("\(line)") } else { logger.debug("\(line)") }
                loggedProblem = lastProblem
                timer?.cancel()
                timer = Task { [weak self] in
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    await self?.timerFired()
                }
            case .announce(let listen):
                guard let client else { return }
                Task { [logger] in
                    let outcome = await client.submit(.playingNow, [listen])
                    logger.debug("playing now: \(listen.artist) – \(listen.title): \(outcome)")
                }
            }
        }
    }

    /// Rewrites the journal with only what is pending once it grew long (every request adds lines; a listen the server
    /// keeps failing on never lets the queue empty). What is under way or must go alone stays marked as such.
    private func compactIfLong() {
        guard journal.lines >= (machine.pendingCount == 0 ? 100 : 1000) else { return }
        let uncertain = machine.mustGoAlone.union(machine.inFlight ?? [])
        do {
            try journal.rewrite(ScrobbleJournal.Contents(pending: machine.pending.map(\.listen), uncertain: uncertain))
        } catch {
            logger.error("scrobble queue: \(error)")
        }
    }

    private func timerFired() {
        perform(machine.timerFired())
    }

    private func answered(_ outcome: ScrobbleMachine.Outcome, count: Int) {
        if case .unreachable = outcome, let ids = machine.inFlight {
            // Known not sent: at the next start these go in a batch again, not one by one.
            do { try journal.unsent(ids) } catch { logger.error("scrobble queue: \(error)") }
        }
        switch outcome {
        case .accepted:
            if !loggedProblem.isEmpty { logger.notice("scrobbling: the server answers again") }
            lastProblem = ""
            loggedProblem = ""
            logger.info("scrobbled \(count) listen(s); \(machine.pendingCount - count) still queued")
        case .unauthorized(let status):
            lastProblem = "the server refused the token (HTTP \(status)); check [plugins.scrobble] token-file or token-env"
        case .refused(let status, let message):
            lastProblem = ""
            logger.warning("scrobbling: the server refused \(count) listen(s) (HTTP \(status): \(message))\(count > 1 ? "; sending them one by one" : "")")
        case .failed(let message), .unreachable(let message):
            lastProblem = "\(settings.url.absoluteString): \(message)"
        }
        perform(machine.answered(outcome))
    }
}

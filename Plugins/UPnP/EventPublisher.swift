import Foundation
import Logging

/// The renderer's event side: holds the subscriptions and sends each subscriber its events in order, one at a time,
/// at most five a second. A slow or unreachable subscriber's changes are merged while it is sent to (an event flood
/// costs one event), and never hold back another subscriber.
actor EventPublisher {
    private var subscriptions: Subscriptions
    /// What waits to be sent to each subscriber: its first full event, or the variables changed since the last one.
    private var waiting: [String: Waiting] = [:]
    private var sending: Set<String> = []
    /// A service's full set of evented properties now (for the initial event).
    private let everything: @Sendable (String) -> [(String, String)]
    private let logger: Logger
    /// The least time between two events to one subscriber (UPnP AV moderates LastChange to 5 a second).
    static let moderation: Duration = .milliseconds(200)

    private enum Waiting {
        case full
        case changes([String: String])
    }

    init(maximum: Int, logger: Logger, everything: @escaping @Sendable (String) -> [(String, String)]) {
        subscriptions = Subscriptions(maximum: maximum)
        self.everything = everything
        self.logger = logger
    }

    var count: Int { subscriptions.all.count }

    func subscribe(service: String, callback: String?, nt: String?, timeout: String?, remote: String) throws(GENAError) -> (sid: String, seconds: Int) {
        let granted = try subscriptions.subscribe(service: service, callback: callback, nt: nt, timeout: timeout, remote: remote, now: .now)
        logger.info("UPnP: \(remote) subscribed to \(service) events for \(granted.seconds) s")
        waiting[granted.sid] = .full
        kick(granted.sid)
        return granted
    }

    func renew(sid: String, service: String, timeout: String?) throws(GENAError) -> Int {
        try subscriptions.renew(sid: sid, service: service, timeout: timeout, now: .now)
    }

    func unsubscribe(sid: String, service: String) throws(GENAError) {
        try subscriptions.unsubscribe(sid: sid, service: service)
        waiting[sid] = nil
    }

    /// Drops what has expired.
    func expire() {
        for sid in subscriptions.expire(now: .now) {
            waiting[sid] = nil
            logger.info("UPnP: subscription \(sid) expired")
        }
    }

    /// Queues a LastChange of `changes` to every subscriber of `service`.
    func publish(service: String, changes: [String: String]) {
        guard !changes.isEmpty else { return }
        for s in subscriptions.of(service) {
            switch waiting[s.sid] {
            case .full?: continue
            case .changes(let older)?: waiting[s.sid] = .changes(older.merging(changes) { _, new in new })
            case nil: waiting[s.sid] = .changes(changes)
            }
            kick(s.sid)
        }
    }

    func removeAll() {
        subscriptions = Subscriptions(maximum: subscriptions.maximum)
        waiting = [:]
    }

    private func kick(_ sid: String) {
        guard sending.insert(sid).inserted else { return }
        Task { await self.drain(sid) }
    }

    private func drain(_ sid: String) async {
        defer { sending.remove(sid) }
        while let next = waiting.removeValue(forKey: sid), let subscription = subscriptions.all[sid],
              let sequence = subscriptions.takeSequence(sid) {
            let properties: [(String, String)]
            switch next {
            case .full: properties = everything(subscription.service)
            case .changes(let changes): properties = [("LastChange", RendererVariables.lastChange(subscription.service, changes))]
            }
            await deliver(EventNotifier.body(properties), to: subscription, sequence: sequence)
            try? await Task.sleep(for: Self.moderation)
        }
    }

    /// Tries each callback URL in turn. The initial event can reach a control point before it has read the SID from
    /// its SUBSCRIBE answer, and be refused with 412; it is sent again a few times, waiting longer each time.
    private func deliver(_ body: String, to subscription: Subscription, sequence: UInt32) async {
        var wait = Duration.milliseconds(50)
        for attempt in 0..<(sequence == 0 ? 6 : 1) {
            if attempt > 0 {
                try? await Task.sleep(for: wait)
                wait *= 2
            }
            for url in subscription.callbacks {
                do {
                    let status = try await EventNotifier.send(to: url, sid: subscription.sid, sequence: sequence, body: body)
                    if (200..<300).contains(status) { return }
                    logger.debug("UPnP: \(url) answered event \(sequence) with HTTP \(status)")
                    if status != 412 { return }
                } catch {
                    logger.debug("UPnP: cannot send event \(sequence) to \(url): \(error)")
                }
            }
        }
    }

    typealias Subscription = Subscriptions.Subscription
}

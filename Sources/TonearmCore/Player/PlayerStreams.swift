import Foundation
import Playback

/// Network streams: the player carries out what its `StreamReconnector` decides (reconnecting a live stream that
/// dropped, the buffer's fill level, a stream that stalls).
extension Player {
    /// Performs the reconnector's actions; its timers are the player's tasks.
    func perform(_ actions: [StreamReconnector.Action]) {
        for action in actions {
            switch action {
            case .schedule(let timer, let delay):
                streamTimers[timer.kind]?.cancel()
                streamTimers[timer.kind] = Task { [weak self] in
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    await self?.streamTimerFired(timer)
                }
            case .cancel(let kind):
                streamTimers[kind]?.cancel()
                streamTimers[kind] = nil
            case .bufferingChanged(let id, let level):
                emitWithState(.buffering(id, percent: level))
            case .reload(let id):
                load(id, paused: false)
            }
        }
    }

    private func streamTimerFired(_ timer: StreamReconnector.Timer) {
        streamTimers[timer.kind] = nil
        switch timer {
        case .reconnect(let attempt):
            perform(reconnector.reconnectDue(attempt: attempt, current: queue.currentID, playing: status == .playing))
        case .stall(let generation):
            stalled(generation: generation)
        }
    }

    /// What became of a live stream that dropped.
    enum Drop {
        /// Not a live stream that was heard: the usual end or failure.
        case notLive
        /// A reconnect is waiting for its turn.
        case reconnecting
        /// The attempts are used up: the caller moves on, with this reason.
        case gaveUp(TonearmError)
    }

    /// When `id` is a live stream that was heard, reconnects it after a wait that grows with each attempt.
    func reconnectIfLive(_ id: TrackID, because reason: String) -> Drop {
        guard let track = queue.track(id) else { return .notLive }
        let (drop, actions) = reconnector.dropped(id, live: track.metadata.isLive == true, now: .now)
        switch drop {
        case .notLive:
            return .notLive
        case .alreadyReconnecting:
            return .reconnecting
        case .reconnecting(let attempt, let delay):
            logger.notice("\(track.uri): \(reason); reconnecting in \(delay) (attempt \(attempt) of \(reconnectPolicy.attempts))")
            perform(actions)
            return .reconnecting
        case .gaveUp(let attempts):
            let error = TonearmError(.streamLost, "\(track.uri): \(reason); gave up after \(attempts) reconnect attempts")
            logger.error("\(error.message)")
            perform(actions)
            return .gaveUp(error)
        }
    }

    /// Whether a reconnect is waiting for its turn.
    var isReconnecting: Bool { reconnector.isReconnecting }

    /// A stall timer fired: a stream that got (next to) no data for the timeout is reconnected, or fails.
    private func stalled(generation: Int) {
        guard reconnector.isStalled(generation: generation), let id = loaded, status == .playing,
              let track = queue.track(id) else { return }
        // No data can come before the engine exists (a start slowed by a cold registry or a busy machine): the stream's
        // time to bring data starts again, rather than failing it for the engine's wait. A watch begun before the
        // engine was there starts again once too, so the stream always gets the whole timeout with an engine (a loaded
        // machine built one 0.5 s before a watch begun with the load ran out).
        guard engine.canReceiveData, !stallWatchBeganBeforeEngine else {
            stallWatchBeganBeforeEngine = !engine.canReceiveData
            perform(reconnector.stopStallWatch() + reconnector.newLiveStream(id))
            return
        }
        let timeout = reconnectPolicy.stallTimeout
        let reason = "no data for \(timeout)"
        let error: TonearmError
        switch reconnectIfLive(id, because: reason) {
        case .reconnecting: return
        case .gaveUp(let lost): error = lost
        case .notLive: error = TonearmError(.stalled, "cannot play \(track.uri): \(reason)")
        }
        logger.error("\(error.message)")
        emit(.trackFailed(id, uri: track.uri, error: error))
        skipper.stalled(id)
        perform(reconnector.buffering(id, 100))
        refreshHandover()
        if let next = playable(after: id, automatic: false) { load(next, paused: false) } else { halt() }
    }

    /// The buffer's fill level now, 0…100 (100 when nothing is buffering).
    public var buffering: Int { reconnector.level }
}

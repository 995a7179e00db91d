import Foundation
import Playback

/// Where reconnecting a live stream stands.
struct StreamReconnect {
    /// The live entry being reconnected (or last heard), its attempts so far, and when it was last heard starting.
    var trackID: TrackID?
    var attempts = 0
    var startedAt: ContinuousClock.Instant?
    var task: Task<Void, Never>?
    /// Watches a buffer that does not fill (a server that sends next to nothing): restarted only when the level
    /// climbs above `stallPeak`, the highest it reached since the watch began.
    var stallWatch: Task<Void, Never>?
    var stallGeneration = 0
    var stallPeak = -1
}

/// Network streams: reconnecting a live stream that dropped, and the buffer's fill level.
extension Player {
    /// A stream heard for this long counts as having recovered: a later drop starts counting attempts afresh.
    static let reconnectRecovery: Duration = .seconds(20)

    /// Notes a stream start (a reconnect that worked, or a new track).
    func streamStarted(_ id: TrackID) {
        if reconnect.trackID != id { reconnect = StreamReconnect(trackID: id) }
        reconnect.startedAt = .now
        if bufferingPercent != 100 { bufferingChanged(id, 100) }
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
        guard let track = queue.track(id), track.metadata.isLive == true, reconnect.trackID == id,
              let startedAt = reconnect.startedAt else { return .notLive }
        // One drop, one attempt: the source's own error after the stall watch fired (or the other way round) is the
        // same drop, already being reconnected.
        if reconnect.task != nil { return .reconnecting }
        if ContinuousClock.now - startedAt > Self.reconnectRecovery { reconnect.attempts = 0 }
        guard reconnect.attempts < reconnectPolicy.attempts else {
            let error = TonearmError(.streamLost, "\(track.uri): \(reason); gave up after \(reconnect.attempts) reconnect attempts")
            logger.error("\(error.message)")
            reconnect = StreamReconnect()
            return .gaveUp(error)
        }
        reconnect.attempts += 1
        let attempt = reconnect.attempts
        let delay = reconnectPolicy.delay(beforeAttempt: attempt)
        logger.notice("\(track.uri): \(reason); reconnecting in \(delay) (attempt \(attempt) of \(reconnectPolicy.attempts))")
        bufferingChanged(id, 0)
        reconnect.task?.cancel()
        reconnect.task = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.reconnectNow(id, attempt: attempt)
        }
        return .reconnecting
    }

    private func reconnectNow(_ id: TrackID, attempt: Int) {
        guard reconnect.trackID == id, reconnect.attempts == attempt, reconnect.task != nil, queue.currentID == id else { return }
        reconnect.task = nil
        // Stopped or paused meanwhile: the user's word wins.
        guard status == .playing else { return }
        load(id, paused: false)
    }

    /// Stops a reconnect that is waiting (the user chose something else, paused or stopped).
    func cancelReconnect() {
        reconnect.task?.cancel()
        reconnect.task = nil
    }

    /// A live stream just loaded must bring data within the stall timeout, as a playing one must: its buffer starts
    /// empty, watched from now (a server that answers its headers and then sends nothing is Stalled, or reconnected).
    func watchNewLiveStream(_ id: TrackID) {
        guard queue.track(id)?.metadata.isLive == true else { return }
        bufferingChanged(id, 0)
    }

    /// Stops watching for a stall (the track changed or stopped).
    func stopStallWatch() {
        reconnect.stallWatch?.cancel()
        reconnect.stallWatch = nil
        reconnect.stallGeneration += 1
        reconnect.stallPeak = -1
    }

    /// Whether a reconnect is waiting for its turn.
    var isReconnecting: Bool { reconnect.task != nil }

    func bufferingChanged(_ id: TrackID, _ percent: Int) {
        let level = min(100, max(0, percent))
        if level != bufferingPercent {
            bufferingPercent = level
            emitWithState(.buffering(id, percent: level))
        }
        if level >= 100 {
            watchForStall(id, level)
            reconnect.stallPeak = -1
        } else if reconnect.stallWatch == nil || level > reconnect.stallPeak {
            // A new high, or the first level of a newly loaded stream. A level that only swings (34, 43, 34… was
            // seen for minutes from an Icecast listener that got nothing after its first burst) is no progress.
            reconnect.stallPeak = level
            watchForStall(id, level)
        }
    }

    /// Below 100 the buffer must fill: a stream that reaches no new level for `stallTimeout` gets (next to) no data.
    private func watchForStall(_ id: TrackID, _ level: Int) {
        reconnect.stallWatch?.cancel()
        reconnect.stallGeneration += 1
        guard level < 100 else { return }
        let generation = reconnect.stallGeneration
        let timeout = reconnectPolicy.stallTimeout
        reconnect.stallWatch = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.stalled(id, generation: generation, after: timeout)
        }
    }

    private func stalled(_ id: TrackID, generation: Int, after timeout: Duration) {
        guard reconnect.stallGeneration == generation, !isReconnecting, loaded == id, status == .playing,
              bufferingPercent < 100, let track = queue.track(id) else { return }
        let reason = "no data for \(timeout)"
        let error: TonearmError
        switch reconnectIfLive(id, because: reason) {
        case .reconnecting: return
        case .gaveUp(let lost): error = lost
        case .notLive: error = TonearmError(.stalled, "cannot play \(track.uri): \(reason)")
        }
        logger.error("\(error.message)")
        emit(.trackFailed(id, uri: track.uri, error: error))
        failed.insert(id)
        bufferingChanged(id, 100)
        refreshHandover()
        if let next = playable(after: id, automatic: false) { load(next, paused: false) } else { halt() }
    }

    /// The buffer's fill level now, 0…100 (100 when nothing is buffering).
    public var buffering: Int { bufferingPercent }
}

import Foundation

/// The player as a second face (the MPD protocol) reads it in one go: the queue in list order, what plays and what
/// comes next, and the settings, all taken at the same moment.
public struct PlayerQueueView: Sendable {
    public var tracks: [Track]
    public var currentID: TrackID?
    /// The entry that would play after the current one ends by itself.
    public var nextID: TrackID?
    public var status: PlaybackStatus
    /// Microseconds into the current track.
    public var position: Int64
    public var volume: Double
    public var loop: LoopStatus
    public var shuffle: Bool
}

/// What a second face needs beyond the MPRIS calls: a consistent view, events of its own, and the queue edits mpd
/// clients send (play an entry from a given position, reorder the whole queue).
extension Player {
    /// Every event, as it happens, on the player's actor (quick, never waiting), besides the bus face's handler;
    /// returns a key for `stopObserving`.
    public nonisolated func observe(_ handler: @escaping @Sendable (PlayerEvent) -> Void) -> Int {
        eventSink.observers.withLock { observers in
            let key = (observers.keys.max() ?? 0) + 1
            observers[key] = handler
            return key
        }
    }

    public nonisolated func stopObserving(_ key: Int) {
        _ = eventSink.observers.withLock { $0.removeValue(forKey: key) }
    }

    /// The queue and the transport now; `body` runs on the actor, so what it reads besides (a face's own
    /// bookkeeping fed by `observe`) belongs to the same moment.
    public func inspect<T: Sendable>(_ body: @Sendable (PlayerQueueView) -> T) -> T {
        body(PlayerQueueView(tracks: queue.tracks, currentID: queue.currentID,
                             nextID: queue.currentID == nil ? nil : playable(after: queue.currentID, automatic: true),
                             status: status, position: position(), volume: volume, loop: queue.loop, shuffle: queue.shuffle))
    }

    /// Makes `id` current and plays it from `microseconds` (paused if paused and `keepPaused`).
    public func play(_ id: TrackID, from microseconds: Int64, keepPaused: Bool = false) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        failed.remove(id)
        if microseconds <= 0, !(keepPaused && status == .paused) {
            switchTo(id, keepingStatus: false)
            return
        }
        if id == loaded, status != .stopped {
            setPosition(id, microseconds)
            return
        }
        load(id, paused: keepPaused && status == .paused, at: microseconds)
        publishCommand()
    }

    /// Puts the queue in the given order (a permutation of its entries); one TrackListReplaced tells the bus.
    public func reorder(_ ids: [TrackID]) throws {
        guard ids != queue.ids else { return }
        guard queue.reorder(ids) else {
            throw TonearmError.invalidValue("the new order must name every queue entry once")
        }
        eventSink.yield(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
    }
}

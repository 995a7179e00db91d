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

    /// The view of a published state, with the position as it reads now.
    public init(_ state: PlayerState) {
        let s = state.snapshot
        self.init(tracks: s.tracks, currentID: s.current?.id, nextID: s.nextID, status: s.status,
                  position: state.position.now, volume: s.volume, loop: s.loop, shuffle: s.shuffle)
    }

    public init(tracks: [Track], currentID: TrackID?, nextID: TrackID?, status: PlaybackStatus, position: Int64,
                volume: Double, loop: LoopStatus, shuffle: Bool) {
        self.tracks = tracks
        self.currentID = currentID
        self.nextID = nextID
        self.status = status
        self.position = position
        self.volume = volume
        self.loop = loop
        self.shuffle = shuffle
    }
}

/// What a second face needs beyond the MPRIS calls: a consistent view, and the queue edits mpd clients send (play an entry from a given position, reorder the whole queue).
extension Player {
    /// The queue and the transport as last published, read at once without waiting for the actor.
    public nonisolated func inspect<T>(_ body: (PlayerQueueView) -> T) -> T {
        body(PlayerQueueView(channel.state))
    }

    /// Makes `id` current and plays it from `microseconds` (paused if paused and `keepPaused`).
    public func play(_ id: TrackID, from microseconds: Int64, keepPaused: Bool = false) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        skipper.forgive(id)
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
        emit(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
    }
}

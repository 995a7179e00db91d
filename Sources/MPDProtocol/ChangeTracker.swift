import Synchronization
import TonearmCore

/// Turns player and library events into mpd's idle subsystems and keeps the playlist version; wakes every client
/// through the hub. Fed by the MPD face's own subscription to the player's events.
public final class ChangeTracker: Sendable {
    private struct State {
        var versions = QueueVersions()
        var last: PlayerSnapshot?
        /// The queue as last taken into `versions`, and its version in the published state.
        var syncedQueueVersion: UInt64?
        var syncedTracks: [Track] = []
        var error: String?
        var clients: [Int: @Sendable (Set<IdleSubsystem>) -> Void] = [:]
        var nextKey = 0
        /// The listening history last seen of each URI in the queue: a change (a listen, a skip, a rating) may change
        /// what a smart playlist selects.
        var stats: [String: TrackStats] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// The playlist version now.
    public var version: UInt32 { state.withLock { $0.versions.version } }
    /// Positions changed since a version (`plchanges`).
    public func changed(since: UInt32) -> [Int] { state.withLock { $0.versions.changed(since: since) } }
    /// The last playback failure, for `status`'s `error:` (until `clearerror`).
    public var error: String? { state.withLock { $0.error } }
    public func clearError() {
        state.withLock { $0.error = nil }
        notify([.player])
    }

    /// Calls `wake` (quick, never waiting) with what changed, from then on; returns a key for `unsubscribe`.
    public func subscribe(_ wake: @escaping @Sendable (Set<IdleSubsystem>) -> Void) -> Int {
        state.withLock { s in
            s.nextKey += 1
            s.clients[s.nextKey] = wake
            return s.nextKey
        }
    }

    public func unsubscribe(_ key: Int) { _ = state.withLock { $0.clients.removeValue(forKey: key) } }

    public var subscriberCount: Int { state.withLock { $0.clients.count } }

    public func notify(_ subsystems: Set<IdleSubsystem>) {
        guard !subsystems.isEmpty else { return }
        for wake in state.withLock({ Array($0.clients.values) }) { wake(subsystems) }
    }

    /// Takes the queue of a published state into the playlist versions, unless a later one was taken already: every
    /// read of the queue does this first, so the version it answers is the one of the entries it lists, whether or
    /// not the face has heard the events yet.
    public func sync(_ snapshot: PlayerSnapshot) {
        state.withLock { s in
            if let synced = s.syncedQueueVersion, snapshot.queueVersion <= synced { return }
            s.versions.update(snapshot.trackIDs)
            var before: [TrackID: TrackMetadata] = [:]
            for track in s.syncedTracks { before[track.id] = track.metadata }
            for track in snapshot.tracks {
                if let old = before[track.id], old != track.metadata { s.versions.touch(track.id) }
            }
            s.syncedTracks = snapshot.tracks
            s.syncedQueueVersion = snapshot.queueVersion
        }
    }

    /// A player event.
    public func handle(_ event: PlayerEvent) {
        if case .changed(let now) = event { sync(now) }
        let changed: Set<IdleSubsystem> = state.withLock { s in
            switch event {
            case .changed(let now):
                return Self.difference(s.last, now, &s)
            case .seeked:
                return [.player]
            case .trackMetadataChanged(let track):
                guard let stats = track.metadata.stats else { return [.playlist] }
                if s.stats.count > 10_000 { s.stats.removeAll() }
                let before = s.stats.updateValue(stats, forKey: track.uri)
                return before == nil || before == stats ? [.playlist] : [.playlist, .storedPlaylist]
            case .trackFailed(_, let uri, let error):
                s.error = "\(uri): \(error.message)"
                return [.player]
            // mpd has no equalizer; like the ReplayGain mode it is a playback option, so clients re-read status.
            case .replayGainModeChanged, .equalizerChanged, .crossfadeChanged:
                return [.options]
            case .outputChanged, .outputFailed:
                return [.output]
            case .tick, .trackListReplaced, .trackAdded, .trackRemoved, .tickIntervalChanged, .lyricsChanged, .lyricsLineChanged, .buffering,
                 .nowPlaying, .listened:
                return []
            }
        }
        notify(changed)
    }

    private static func difference(_ old: PlayerSnapshot?, _ now: PlayerSnapshot, _ s: inout State) -> Set<IdleSubsystem> {
        s.last = now
        guard let old else { return [.player, .mixer, .options, .playlist] }
        var out: Set<IdleSubsystem> = []
        if old.status != now.status || old.current?.id != now.current?.id || old.current != now.current { out.insert(.player) }
        if old.volume != now.volume { out.insert(.mixer) }
        if old.loop != now.loop || old.shuffle != now.shuffle || old.continueMode != now.continueMode { out.insert(.options) }
        if !old.hasSameEntries(as: now) { out.insert(.playlist) }
        return out
    }

    /// A library event.
    public func handle(_ change: MPDLibraryChange) {
        switch change {
        case .scanning: notify([.update])
        // Smart playlists are read from the library as it is: they may have changed too.
        case .scanFinished: notify([.update, .database, .storedPlaylist])
        case .changed: notify([.database, .storedPlaylist])
        }
    }
}

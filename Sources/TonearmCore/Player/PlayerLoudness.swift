import Foundation
import Playback

/// ReplayGain: which gain each queue entry plays at, and the mode set live.
extension Player {
    /// The ReplayGain mode now.
    public var replayGainMode: ReplayGainMode { replayGain.mode }

    /// Whether a track start is under way (from a load until the track is heard); readable from any thread.
    public nonisolated var isStartingTrack: Bool { startingTrack.load(ordering: .relaxed) }

    /// The factor applied to what plays now (1 when nothing plays or the mode is off).
    public var appliedGain: Double { status == .stopped ? 1 : engine.appliedGain }

    /// Changes the mode at once: what plays takes its new gain now, what follows when it starts.
    public func setReplayGainMode(_ mode: ReplayGainMode) {
        guard mode != replayGain.mode else { return }
        replayGain.mode = mode
        replayGainModeSetLive = true
        applyGains()
        emitWithState(.replayGainModeChanged(mode))
        scheduleSave()
    }

    /// The linear factor for a queue entry: its loudness, the settings, and (auto) whether it plays as part of an
    /// album in order.
    func gain(for track: Track) -> Double {
        let album = ReplayGainSettings.usesAlbumGain(replayGain.mode, shuffle: queue.shuffle, albumNeighbour: hasAlbumNeighbour(track))
        return replayGain.factor(for: track.metadata.loudness, album: album)
    }

    /// The loaded entry and every entry handed over or planned take the gain the settings give them now.
    func applyGains() {
        if let loaded, let track = queue.track(loaded) { engine.setGain(gain(for: track), forToken: loaded.serial ?? 0) }
        refreshHandover()
    }

    /// True when the entry before or after `track` in play order is from the same album (title and album artist).
    func hasAlbumNeighbour(_ track: Track) -> Bool {
        guard let album = track.metadata.album, !album.isEmpty else { return false }
        let order = queue.playOrder
        guard let index = order.firstIndex(of: track.id) else { return false }
        for neighbour in [index - 1, index + 1] where order.indices.contains(neighbour) {
            guard let other = queue.track(order[neighbour]) else { continue }
            if other.metadata.album?.lowercased() == album.lowercased(),
               other.metadata.albumArtists.first?.lowercased() == track.metadata.albumArtists.first?.lowercased() {
                return true
            }
        }
        return false
    }
}

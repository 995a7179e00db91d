/// MPRIS LoopStatus: what happens when a track or the queue ends.
public enum LoopStatus: String, Sendable, Codable, CaseIterable {
    case none = "None"
    case track = "Track"
    case playlist = "Playlist"
}

/// MPRIS PlaybackStatus.
public enum PlaybackStatus: String, Sendable, Codable {
    case playing = "Playing"
    case paused = "Paused"
    case stopped = "Stopped"
}

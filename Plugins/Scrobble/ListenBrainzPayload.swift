import Foundation

/// The body of POST /1/submit-listens.
enum ListenBrainzPayload {
    enum Kind: String, Sendable, Equatable {
        case playingNow = "playing_now"
        case single
        case `import`
    }

    static let client = "Tonearm"

    /// The JSON document: `listen_type` and `payload`, each listen with `listened_at` (none for playing now) and
    /// `track_metadata` (artist, track and release names, `additional_info` with the duration, the track number, the
    /// MusicBrainz ids and the submitting client).
    static func body(_ kind: Kind, _ listens: [ScrobbleListen]) -> Data {
        let payload: [[String: Any]] = listens.map { listen in
            var info: [String: Any] = ["submission_client": client, "media_player": client]
            if let duration = listen.duration, duration > 0 {
                info["duration_ms"] = Int((duration * 1000).rounded())
                info["duration"] = Int(duration.rounded())  // Maloja reads seconds
            }
            if let n = listen.trackNumber { info["tracknumber"] = n }
            if let ids = listen.musicBrainz {
                if let id = ids.recording { info["recording_mbid"] = id }
                if let id = ids.track { info["track_mbid"] = id }
                if let id = ids.release { info["release_mbid"] = id }
                if let id = ids.releaseGroup { info["release_group_mbid"] = id }
                if !ids.artists.isEmpty { info["artist_mbids"] = ids.artists }
            }
            var metadata: [String: Any] = ["artist_name": listen.artist, "track_name": listen.title, "additional_info": info]
            if let release = listen.release { metadata["release_name"] = release }
            var item: [String: Any] = ["track_metadata": metadata]
            if kind != .playingNow { item["listened_at"] = listen.listenedAt }
            return item
        }
        let document: [String: Any] = ["listen_type": kind.rawValue, "payload": payload]
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data()
    }
}

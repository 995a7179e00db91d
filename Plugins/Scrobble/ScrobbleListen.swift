import Foundation
import TonearmCore

/// A listen as a ListenBrainz-compatible server takes it: when it began, who and what, and the ids the tags had.
public struct ScrobbleListen: Sendable, Equatable, Codable {
    /// Unix seconds when the listen began (ListenBrainz's `listened_at`).
    public var listenedAt: Int64
    public var artist: String
    public var title: String
    public var release: String?
    /// Seconds.
    public var duration: Double?
    public var trackNumber: Int?
    public var musicBrainz: MusicBrainzIDs?

    public init(listenedAt: Int64, artist: String, title: String, release: String? = nil, duration: Double? = nil,
                trackNumber: Int? = nil, musicBrainz: MusicBrainzIDs? = nil) {
        self.listenedAt = listenedAt
        self.artist = artist
        self.title = title
        self.release = release
        self.duration = duration
        self.trackNumber = trackNumber
        self.musicBrainz = musicBrainz
    }

    /// A listen the player counted; nil when it has no artist or no title (a server refuses those).
    public init?(_ listen: Listen) {
        guard let title = Self.text(listen.title), let artist = Self.artist(listen.artists) else { return nil }
        self.init(listenedAt: Int64(listen.startedAt.timeIntervalSince1970.rounded(.down)), artist: artist, title: title,
                  release: Self.text(listen.album), duration: listen.length, trackNumber: listen.trackNumber,
                  musicBrainz: listen.musicBrainz)
    }

    /// What plays now, for "playing now" (no time); nil without an artist or a title.
    public init?(playing metadata: TrackMetadata, at now: Date = Date()) {
        guard let title = Self.text(metadata.title), let artist = Self.artist(metadata.artists) else { return nil }
        let live = metadata.isLive == true
        self.init(listenedAt: Int64(now.timeIntervalSince1970), artist: artist, title: title,
                  release: live ? nil : Self.text(metadata.album),
                  duration: live ? nil : metadata.length.map { Double($0) / 1_000_000 },
                  trackNumber: live ? nil : metadata.trackNumber, musicBrainz: live ? nil : metadata.musicBrainz)
    }

    static func text(_ s: String?) -> String? {
        guard let s = s?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty else { return nil }
        return s
    }

    /// Several artist tags are one name to the server ("A, B"); MusicBrainz ids name them apart.
    static func artist(_ artists: [String]) -> String? {
        text(artists.compactMap { text($0) }.joined(separator: ", "))
    }
}

/// One listen in the on-disk queue, under an id of its own (what the journal's lines name).
public struct QueuedListen: Sendable, Equatable, Codable {
    public var id: String
    public var listen: ScrobbleListen

    public init(id: String = UUID().uuidString.lowercased(), listen: ScrobbleListen) {
        self.id = id
        self.listen = listen
    }
}

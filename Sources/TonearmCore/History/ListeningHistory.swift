import Foundation

/// What was heard of one track: counts, first and last time, and the user's rating.
public struct TrackStats: Sendable, Equatable, Codable {
    /// Listens that counted (ListenBrainz's rule: half the track or 4 minutes heard).
    public var playCount: Int
    /// Times the user moved on before a listen counted.
    public var skipCount: Int
    public var firstPlayed: Date?
    public var lastPlayed: Date?
    /// Half stars, 0 to 10 (as MPD clients send them); nil when never rated.
    public var rating: Int?

    public init(playCount: Int = 0, skipCount: Int = 0, firstPlayed: Date? = nil, lastPlayed: Date? = nil, rating: Int? = nil) {
        self.playCount = playCount
        self.skipCount = skipCount
        self.firstPlayed = firstPlayed
        self.lastPlayed = lastPlayed
        self.rating = rating
    }
}

/// One listen that counted, as history lists it.
public struct Listen: Sendable, Equatable, Codable {
    public var uri: String
    public var title: String?
    public var artists: [String]
    public var album: String?
    /// When the listen began.
    public var startedAt: Date
    /// Seconds heard.
    public var heard: Double
    /// A song of a live stream (counted per title, by the station's URI and the title).
    public var isLive: Bool
    /// What a scrobble says beside the above (not kept by the history): the track's length in seconds, its number on
    /// the album, and its MusicBrainz ids.
    public var length: Double?
    public var trackNumber: Int?
    public var musicBrainz: MusicBrainzIDs?

    public init(uri: String, title: String?, artists: [String], album: String?, startedAt: Date, heard: Double, isLive: Bool = false,
                length: Double? = nil, trackNumber: Int? = nil, musicBrainz: MusicBrainzIDs? = nil) {
        self.uri = uri
        self.title = title
        self.artists = artists
        self.album = album
        self.startedAt = startedAt
        self.heard = heard
        self.isLive = isLive
        self.length = length
        self.trackNumber = trackNumber
        self.musicBrainz = musicBrainz
    }
}

/// Where listens, skips and ratings are kept (the library index); the Player decides what counts.
public protocol ListeningHistory: Sendable {
    /// Records a listen that counted; the track's stats after it.
    func recordListen(_ listen: Listen) async throws -> TrackStats
    /// Records a skip; the track's stats after it.
    func recordSkip(uri: String, at: Date) async throws -> TrackStats
    /// A track's stats, nil when nothing is known of it.
    func stats(uri: String) async throws -> TrackStats?
    /// Sets (0…10 half stars) or clears (nil) a track's rating; its stats after it.
    func setRating(uri: String, halfStars: Int?) async throws -> TrackStats
    /// Listens from `since` on (all when nil), newest first, at most `limit`.
    func listens(since: Date?, limit: Int) async throws -> [Listen]
}

/// Library tracks ordered by what the history knows of them.
public enum HistoryRanking: String, Sendable, CaseIterable {
    /// Most played first.
    case top
    /// Last played first.
    case recent
    /// Loved once (played or rated 3.5 stars or more) and not heard for `forgottenAfter`, best rated first.
    case forgotten

    /// How long a track must have gone unheard to be forgotten.
    public static let forgottenAfter: TimeInterval = 90 * 86_400
}

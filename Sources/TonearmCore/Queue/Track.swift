import Foundation

/// A queue entry's identity on the bus: an object path that never changes while the entry exists.
public struct TrackID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The MPRIS "no track" path, used when nothing is loaded.
    public static let noTrack = TrackID(path: "/org/mpris/MediaPlayer2/TrackList/NoTrack")
    static let prefix = "/org/tonearm/track/"

    public let path: String

    public init(path: String) { self.path = path }
    /// The id of queue entry number `serial`.
    public init(serial: UInt64) { self.path = Self.prefix + String(serial) }

    /// The number inside a Tonearm track path (also the playback token).
    public var serial: UInt64? {
        guard path.hasPrefix(Self.prefix) else { return nil }
        return UInt64(path.dropFirst(Self.prefix.count))
    }
    public var description: String { path }
}

/// Everything MPRIS can say about a track.
public struct TrackMetadata: Sendable, Equatable, Codable {
    public var url: String
    public var title: String?
    public var artists: [String] = []
    public var album: String?
    public var albumArtists: [String] = []
    public var trackNumber: Int?
    public var discNumber: Int?
    public var genres: [String] = []
    /// The year of release, when the tags say (for "similar" continuations by decade; MPRIS has no field for it).
    public var year: Int?
    /// Length in microseconds, when known.
    public var length: Int64?
    /// A file:// URL of cover art in the cache, when the track has any.
    public var artUrl: String?
    /// What the engine opens when it is not `url`: a source's playable rendition of the file (a MIDI file
    /// rewritten into a form GStreamer plays). Never shown to clients.
    public var streamURL: String?
    /// The source knows the stream seeks although GStreamer says it cannot (MIDI through midiparse), or before it can
    /// say so (a file served over HTTP with byte ranges).
    public var seeksDespiteQuery: Bool?
    /// The station a network stream comes from (its `icy-name`), kept apart from the song's title.
    public var station: String?
    /// A live stream (internet radio): no length, no seeking, reconnected when it drops.
    public var isLive: Bool?
    /// ReplayGain figures (from tags or measured), when known; never shown to clients.
    public var loudness: TrackLoudness?
    /// What the listening history knows of it (plays, skips, rating), when anything.
    public var stats: TrackStats?
    /// MusicBrainz ids from the tags, when they have any (sent with scrobbles; MPRIS has no field for them).
    public var musicBrainz: MusicBrainzIDs?

    public init(url: String, title: String? = nil) {
        self.url = url
        self.title = title
    }
}

/// One entry of the queue.
public struct Track: Sendable, Equatable, Codable, Identifiable {
    public let id: TrackID
    public var metadata: TrackMetadata
    public var uri: String { metadata.url }

    public init(id: TrackID, metadata: TrackMetadata) {
        self.id = id
        self.metadata = metadata
    }
}

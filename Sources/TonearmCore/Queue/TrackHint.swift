/// What a sender said of a URI it queues (a cast's DIDL-Lite). Its fields win over what the plugins found, which for a
/// file on the web is little more than its name; the stream's own tags, once heard, still refine them.
public struct TrackHint: Sendable, Equatable {
    public var title: String?
    public var artists: [String]
    public var album: String?
    public var albumArtists: [String]
    public var genres: [String]
    public var trackNumber: Int?
    /// An http(s) URL of cover art.
    public var artUrl: String?
    /// Microseconds.
    public var length: Int64?

    public init(title: String? = nil, artists: [String] = [], album: String? = nil, albumArtists: [String] = [],
                genres: [String] = [], trackNumber: Int? = nil, artUrl: String? = nil, length: Int64? = nil) {
        self.title = title
        self.artists = artists
        self.album = album
        self.albumArtists = albumArtists
        self.genres = genres
        self.trackNumber = trackNumber
        self.artUrl = artUrl
        self.length = length
    }

    /// `metadata` with each field the hint has; the length only where the plugins found none (theirs is measured).
    public func applied(to metadata: TrackMetadata) -> TrackMetadata {
        var m = metadata
        m.title = title ?? m.title
        if !artists.isEmpty { m.artists = artists }
        m.album = album ?? m.album
        if !albumArtists.isEmpty { m.albumArtists = albumArtists }
        if !genres.isEmpty { m.genres = genres }
        m.trackNumber = trackNumber ?? m.trackNumber
        m.artUrl = artUrl ?? m.artUrl
        if m.length == nil || m.length == 0, m.isLive != true { m.length = length }
        return m
    }
}

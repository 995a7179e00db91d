/// Tags read from the stream (GStreamer tag messages), merged per item.
public struct StreamTags: Sendable, Equatable {
    public var title: String?
    public var artists: [String] = []
    public var album: String?
    public var albumArtists: [String] = []
    public var trackNumber: Int?
    public var discNumber: Int?
    public var genres: [String] = []
    /// "YYYY", "YYYY-MM-DD" or an ISO 8601 date-time, as the stream gave it.
    public var date: String?
    public var comment: String?
    /// GST_TAG_ORGANIZATION: for an internet radio stream, the station's name (its `icy-name` header).
    public var organization: String?
    /// GST_TAG_IMAGE (or, failing that, GST_TAG_PREVIEW_IMAGE) bytes: the encoded picture.
    public var image: [UInt8]?

    public init() {}

    /// True when no field is set.
    public var isEmpty: Bool { self == StreamTags() }

    /// Fields set in `newer` replace ours; fields it lacks keep our value.
    public mutating func merge(_ newer: StreamTags) {
        if let v = newer.title { title = v }
        if !newer.artists.isEmpty { artists = newer.artists }
        if let v = newer.album { album = v }
        if !newer.albumArtists.isEmpty { albumArtists = newer.albumArtists }
        if let v = newer.trackNumber { trackNumber = v }
        if let v = newer.discNumber { discNumber = v }
        if !newer.genres.isEmpty { genres = newer.genres }
        if let v = newer.date { date = v }
        if let v = newer.comment { comment = v }
        if let v = newer.organization { organization = v }
        if let v = newer.image { image = v }
    }

    public func merging(_ newer: StreamTags) -> StreamTags {
        var copy = self
        copy.merge(newer)
        return copy
    }
}

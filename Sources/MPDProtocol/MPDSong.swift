import Foundation

/// A song as MPD clients see it: its `file` (a path relative to the music folder, or a URI) and its tags under
/// mpd's names, in mpd's order.
public struct MPDSong: Sendable, Equatable {
    /// Tag names mpd 0.23 knows, as it spells them (filters and `tagtypes` accept any of them in any case).
    public static let knownTags = [
        "Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title", "TitleSort", "Track",
        "Name", "Genre", "Mood", "Date", "OriginalDate", "Composer", "ComposerSort", "Performer", "Conductor", "Work",
        "Ensemble", "Movement", "MovementNumber", "Location", "Grouping", "Comment", "Disc", "Label",
        "MUSICBRAINZ_ARTISTID", "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID",
        "MUSICBRAINZ_RELEASETRACKID", "MUSICBRAINZ_WORKID",
    ]
    /// The tags Tonearm fills in (what `tagtypes` lists).
    public static let suppliedTags = ["Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc"]

    public var file: String
    /// Tag name and value pairs, a name repeated for several values.
    public var tags: [(name: String, value: String)] = []
    /// Seconds, when known.
    public var duration: Double?
    /// A file:// URL of the cover art, when there is any.
    public var artURL: String?
    /// The URI the player opens for this song.
    public var uri: String

    public init(file: String, uri: String, tags: [(name: String, value: String)] = [], duration: Double? = nil, artURL: String? = nil) {
        self.file = file
        self.uri = uri
        self.tags = tags
        self.duration = duration
        self.artURL = artURL
    }

    /// The canonical spelling of a tag name given in any case; nil when mpd knows no such tag.
    public static func canonicalTag(_ name: String) -> String? {
        knownTags.first { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Every value of a tag (canonical name). AlbumArtist falls back to Artist, and the *Sort tags to their tag, as
    /// mpd does.
    public func values(_ tag: String) -> [String] {
        let direct = tags.filter { $0.name == tag }.map(\.value)
        if !direct.isEmpty { return direct }
        switch tag {
        case "AlbumArtist", "ArtistSort": return values("Artist")
        case "AlbumArtistSort": return values("AlbumArtist")
        case "AlbumSort": return values("Album")
        case "TitleSort": return values("Title")
        default: return []
        }
    }

    /// The song's lines in a reply (without Pos/Id).
    public func lines() -> String {
        var r = Reply()
        r.song(self)
        return String(decoding: r.bytes, as: UTF8.self)
    }

    /// Seconds as mpd's `duration:` gives them: three decimals, with no trip through `String(format:)`, which took
    /// most of the time of a `playlistinfo` of 10,000 entries.
    static func milliseconds(_ seconds: Double) -> String {
        Reply.decimal(max(0, seconds), places: 3)
    }

    public static func == (lhs: MPDSong, rhs: MPDSong) -> Bool {
        lhs.file == rhs.file && lhs.uri == rhs.uri && lhs.duration == rhs.duration && lhs.artURL == rhs.artURL
            && lhs.tags.map(\.name) == rhs.tags.map(\.name) && lhs.tags.map(\.value) == rhs.tags.map(\.value)
    }
}

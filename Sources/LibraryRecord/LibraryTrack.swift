import Foundation

/// The one record of an indexed track, as the library keeps it and every face (MPRIS's Library1, the MPD face, the
/// web face) and the command line show it. A module of its own, so that the CLI reads it without linking the player.
public struct LibraryTrack: Sendable, Codable, Equatable {
    /// The file's path for people (bytes that are not UTF-8 show as U+FFFD; `uri` is exact).
    public var path: String
    /// A file:// URI with every byte outside the unreserved set percent-encoded: exact, also for non-UTF-8 names.
    public var uri: String
    /// From the tags, else the file name without its extension.
    public var title: String
    /// Empty when the file does not say.
    public var artist: String
    public var album: String
    /// The album artist tag (ID3v2 TPE2, Vorbis ALBUMARTIST, MP4 aART), else the artist.
    public var albumArtist: String
    public var genre: String?
    public var year: Int?
    public var trackNumber: Int?
    public var discNumber: Int?
    /// Seconds: exact for WAV, FLAC, Ogg and MP3 with a Xing/Info header; TagLib's whole seconds otherwise.
    public var duration: Double
    public var hasCover: Bool
    /// A file:// URL of the cover image in the art cache (embedded picture first, else the folder image).
    public var artUrl: String?
    /// ReplayGain figures: from the tags, else measured by Tonearm; nil when neither is known yet.
    public var loudness: TrackLoudness?
    /// MusicBrainz ids from the tags, when they have any.
    public var musicBrainz: MusicBrainzIDs?

    public init(path: String, uri: String, title: String, artist: String, album: String, albumArtist: String,
                genre: String? = nil, year: Int? = nil, trackNumber: Int? = nil, discNumber: Int? = nil,
                duration: Double, hasCover: Bool, artUrl: String?, loudness: TrackLoudness? = nil,
                musicBrainz: MusicBrainzIDs? = nil) {
        self.loudness = loudness
        self.musicBrainz = musicBrainz
        self.path = path
        self.uri = uri
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.genre = genre
        self.year = year
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.duration = duration
        self.hasCover = hasCover
        self.artUrl = artUrl
    }
}

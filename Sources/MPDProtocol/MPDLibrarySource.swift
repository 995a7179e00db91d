import Foundation

/// A music library as the MPD face sees it; the daemon conforms the library plugin to it (this module names no
/// plugin).
public protocol MPDLibrarySource: Sendable {
    /// The music folders; songs are named by their path inside one of them.
    var folders: [URL] { get }
    /// Whether a scan is running.
    var isScanning: Bool { get }
    /// Scan and change events; each access starts a new subscription.
    var changes: AsyncStream<MPDLibraryChange> { get }
    /// Every indexed track.
    func allTracks() async throws -> [MPDLibraryTrack]
    /// Starts a scan of the music folders and returns without waiting for it.
    func startRescan()
}

/// What the library tells the MPD face.
public enum MPDLibraryChange: Sendable, Equatable {
    /// A scan is running (sent at its first progress report).
    case scanning
    case scanFinished
    /// The index changed.
    case changed
}

/// One indexed track.
public struct MPDLibraryTrack: Sendable, Equatable {
    /// The absolute file path.
    public var path: String
    /// The file:// URI the player opens.
    public var uri: String
    public var title: String
    public var artist: String
    public var album: String
    public var albumArtist: String
    public var genre: String?
    public var year: Int?
    public var trackNumber: Int?
    public var discNumber: Int?
    /// Seconds.
    public var duration: Double
    public var artURL: String?

    public init(path: String, uri: String, title: String, artist: String, album: String, albumArtist: String, genre: String?,
                year: Int?, trackNumber: Int?, discNumber: Int?, duration: Double, artURL: String?) {
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
        self.artURL = artURL
    }
}

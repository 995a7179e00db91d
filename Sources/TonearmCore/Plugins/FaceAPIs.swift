import Foundation

// What the faces (MPRIS's org.tonearm.* adapters, the web face) ask of the plugins' Swift APIs. A face names no
// plugin: the daemon, which sees both, conforms each plugin (and its record types) to these.

/// A music library as org.tonearm.Library1 sees it, with the listening history it keeps.
public protocol LibraryAPI: ListeningHistory {
    associatedtype Artist: LibraryArtistRecord
    associatedtype Album: LibraryAlbumRecord
    associatedtype Problem: LibraryProblemRecord
    associatedtype Event: LibraryEventRecord

    /// The music folders.
    var folders: [URL] { get }
    /// Whether a scan is running.
    var isScanning: Bool { get }
    /// Scan progress and change events; each face subscribes with a buffer of its own.
    var events: EventFanOut<Event> { get }
    /// Every track artist.
    func artists() async throws -> [Artist]
    /// Albums, all or those an artist appears on.
    func albums(artist: String?) async throws -> [Album]
    /// The tracks of one album.
    func tracks(album: String, albumArtist: String?) async throws -> [LibraryTrack]
    /// Tracks matching a query in the library's search syntax, a page at a time.
    func search(query: String, offset: Int, limit: Int) async throws -> [LibraryTrack]
    /// Library tracks by what the history knows of them, each with its stats, at most `limit`.
    func ranked(_ ranking: HistoryRanking, limit: Int) async throws -> [(track: LibraryTrack, stats: TrackStats)]
    /// Today's pick for `day` (yyyy-MM-dd): stable for the day, never heard in the 30 days before it, weighted by
    /// rating; nil when the library is empty.
    func todaysPick(day: String) async throws -> LibraryTrack?
    /// One track at random, nil when the library is empty.
    func randomTrack() async throws -> LibraryTrack?
    /// Files and folders that could not be indexed.
    func failures() async throws -> [Problem]
    /// Scans the music folders (progress and end come as events).
    func rescan() async throws
    /// ReplayGain measurement: tracks tagged with a gain, measured, waiting, failed; whether it runs.
    func loudnessCounts() async throws -> (tagged: Int, measured: Int, pending: Int, failed: Int, running: Bool)
    /// Writes measured gains into the files' tags: how many, and the files that failed.
    func writeMeasuredGains() async throws -> (written: Int, failures: [Problem])
}

/// A track artist with counts.
public protocol LibraryArtistRecord: Sendable {
    var name: String { get }
    var albumCount: Int { get }
    var trackCount: Int { get }
}

/// An album with counts.
public protocol LibraryAlbumRecord: Sendable {
    var title: String { get }
    var albumArtist: String { get }
    var year: Int? { get }
    var trackCount: Int { get }
    /// Seconds.
    var totalDuration: Double { get }
    var artUrl: String? { get }
}

/// A file or folder that could not be indexed, and why.
public protocol LibraryProblemRecord: Sendable {
    var path: String { get }
    var reason: String { get }
}

/// A library event, as far as the bus hears of it.
public protocol LibraryEventRecord: Sendable {
    /// The scan signal this event is, if any.
    var scanSignal: LibraryScanSignal? { get }
}

/// The org.tonearm.Library1 scan signals.
public enum LibraryScanSignal: Sendable, Equatable {
    /// `done` of `total` files read.
    case progress(done: Int, total: Int)
    /// A scan ended, with what it did.
    case finished(added: Int, updated: Int, removed: Int, failed: Int)
}

/// Received shares as org.tonearm.Shares1 sees them.
public protocol SharesAPI: Sendable {
    associatedtype Event: ShareEventRecord

    /// The watched inbox folders.
    var inboxes: [URL] { get }
    /// Every import and export, in order; each face subscribes with a buffer of its own.
    var events: EventFanOut<Event> { get }
    /// Starts exporting the file at `uri` into `folder` in `mode`; returns the export's id.
    func export(uri: String, folder: String, mode: String) async throws -> String
    /// Stops a running export; false when there is none with that id.
    func cancelExport(_ id: String) -> Bool
    /// A sender says the transfer of the file at `path` is complete.
    func senderFinished(_ path: String)
    /// Offers from network senders waiting for the user.
    func pendingShareOffers() async -> [PendingShareOffer]
    /// Accepts or declines an offer; false when none with that id waits.
    func answerOffer(_ id: String, accept: Bool) async -> Bool
}

/// Files a network sender offers, waiting for the user.
public struct PendingShareOffer: Sendable, Equatable {
    public var id: String
    public var sender: String
    public var address: String
    public var fingerprint: String
    public var files: [String]
    public var sizes: [Int64]

    public init(id: String, sender: String, address: String, fingerprint: String, files: [String], sizes: [Int64]) {
        self.id = id
        self.sender = sender
        self.address = address
        self.fingerprint = fingerprint
        self.files = files
        self.sizes = sizes
    }
}

/// A shares event, as the bus hears of it.
public protocol ShareEventRecord: Sendable {
    /// The Shares1 signal this event is.
    var shareSignal: ShareSignal { get }
}

/// The org.tonearm.Shares1 signals.
public enum ShareSignal: Sendable, Equatable {
    /// A file was accepted: where it now is, and what it holds.
    case received(uri: String, metadata: TrackMetadata)
    /// A file was refused: where it now is, and why.
    case rejected(path: String, reason: String)
    /// An export made progress (0…1).
    case exportProgress(id: String, fraction: Double)
    /// An export ended: where the file now is, or why there is none.
    case exportFinished(id: String, path: String?, error: TonearmError?)
    /// A network sender waits for the user.
    case offered(PendingShareOffer)
    /// An offer no longer waits.
    case offerClosed(id: String)
    /// A network sender's file: where it is in the library, or why it was refused.
    case fromDevice(sender: String, address: String, fingerprint: String, fileName: String, uri: String?, reason: String?)
}

/// A playlist as org.mpris.MediaPlayer2.Playlists and org.tonearm.Playlists1 show it.
public struct PlaylistRecord: Sendable, Equatable {
    /// Its object path (stable for the same file).
    public var id: String
    public var name: String
    /// The playlist file's URI (queued through the player, which reads its entries).
    public var uri: String
    /// Saved by Tonearm (false: found in a music folder).
    public var isSaved: Bool

    public init(id: String, name: String, uri: String, isSaved: Bool) {
        self.id = id
        self.name = name
        self.uri = uri
        self.isSaved = isSaved
    }
}

/// Saved playlists, smart playlists and those in the music folders, as the playlist interfaces see them.
public protocol PlaylistsAPI: Sendable {
    /// The orderings `playlists` takes (MPRIS Playlist_Ordering values).
    var orderings: [String] { get }
    /// Every playlist in `ordering` (one of `orderings`), reversed when asked.
    func playlists(ordering: String, reversed: Bool) throws -> [PlaylistRecord]
    /// The playlist with this name (saved ones first) or id.
    func playlist(_ nameOrID: String) throws -> PlaylistRecord
    /// Its entries: URI, title ("" when none), length in seconds (-1 when unknown); a smart playlist's as they are now.
    func entries(_ nameOrID: String) async throws -> [(uri: String, title: String, seconds: Int64)]
    /// Saves the tracks as the playlist `name` (replacing a saved one of that name).
    func save(_ name: String, tracks: [Track]) throws -> PlaylistRecord
    /// Removes a saved playlist.
    func remove(_ name: String) throws
    /// Notes that a playlist was played now.
    func markPlayed(_ id: String)
}

import Foundation
import RawPaths
import GRDB
import Logging
import Synchronization
import TonearmCore

/// The user's music folders as an indexed, queryable library with cover art.
///
/// Scans run one at a time on a queue of their own (never on the caller's executor); tag reading is spread over
/// a few threads. Queries read the SQLite index (WAL) and answer while a scan writes.
public final class LocalLibrary: SourcePlugin {
    public let name = "library"
    /// The music folders, as configured.
    public let folders: [URL]
    let roots: [RawPath]
    let excluded: Set<RawPath>
    private let index: IndexOpening
    /// The index; its first use opens it (see `IndexOpening`).
    var database: DatabasePool { get throws { try index.pool() } }
    let artCache: ArtCache
    let logger: Logger

    private let scanQueue = DispatchQueue(label: "tonearm.library.scan", qos: .utility)
    let readQueue = DispatchQueue(label: "tonearm.library.read", qos: .userInitiated, attributes: .concurrent)
    /// Scan progress and change events, to each subscriber through a bounded buffer of its own.
    public let events = EventFanOut<LibraryEvent>(coalesces: { older, newer in
        // A reader that fell behind needs only the latest progress.
        if case .scanProgress = older, case .scanProgress = newer { return true }
        return false
    })
    private let watcher = Mutex<Watcher?>(nil)
    let scansRunning = Atomic<Int>(0)
    /// Loudness measurement (LoudnessScan.swift): what measures, whether it runs, whether to go round again.
    let measurer = Mutex<Measurer?>(nil)
    let measuring = Atomic<Bool>(false)
    let measureAgain = Atomic<Bool>(false)
    let measureQueue = DispatchQueue(label: "tonearm.library.loudness", qos: .background)

    /// Whether a scan (asked for, or started by the watcher) is running now.
    public var isScanning: Bool { scansRunning.load(ordering: .relaxed) > 0 }

    /// A library whose index at `database` is opened (created or migrated) by its first use, or by `openIndex`.
    /// `excluding`: folders inside the music folders that are not part of the library (where shares arrive and
    /// rejects go), with everything below them.
    public init(folders: [URL], excluding: [URL] = [], database: URL, artCache: ArtCache, logger: Logger) {
        self.folders = folders
        self.excluded = Set(excluding.compactMap { RawPath(fileURL: $0.standardizedFileURL) })
        var roots: [RawPath] = []
        for folder in folders {
            guard let path = RawPath(fileURL: folder.standardizedFileURL) else { continue }
            if !roots.contains(where: { path.isWithin($0) }) {
                roots.removeAll { $0.isWithin(path) }
                roots.append(path)
            }
        }
        self.roots = roots
        self.index = IndexOpening(database)
        self.artCache = artCache
        self.logger = logger
    }

    /// Opens the index now, if its first use has not; throws why it cannot be opened.
    public func openIndex() throws {
        _ = try index.pool()
    }

    deinit {
        watcher.withLock { $0?.stop() }
        events.finish()
    }

    /// The XDG music folder: `XDG_MUSIC_DIR` from `$XDG_CONFIG_HOME/user-dirs.dirs` (with `$HOME` expanded),
    /// else `~/Music`.
    public static func defaultMusicFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let dirs = XDGDirectories(environment: environment)
        let file = dirs.configHome.appendingPathComponent("user-dirs.dirs")
        let fallback = URL(fileURLWithPath: home).appendingPathComponent("Music")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return fallback }
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("XDG_MUSIC_DIR="), !trimmed.hasPrefix("#") else { continue }
            var value = String(trimmed.dropFirst("XDG_MUSIC_DIR=".count))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            value = value.replacingOccurrences(of: "\\\"", with: "\"")
            if value.hasPrefix("$HOME") {
                value = home + value.dropFirst("$HOME".count)
            } else if value.hasPrefix("${HOME}") {
                value = home + value.dropFirst("${HOME}".count)
            }
            // The spec allows only $HOME-relative or absolute paths; a folder equal to $HOME means "disabled".
            guard value.hasPrefix("/") else { return fallback }
            let url = URL(fileURLWithPath: value).standardizedFileURL
            if url.path == URL(fileURLWithPath: home).standardizedFileURL.path { return fallback }
            return url
        }
        return fallback
    }

    // MARK: Events

    func emit(_ event: LibraryEvent) {
        events.publish(event)
    }

    // MARK: Scanning

    /// An incremental scan of every music folder: only new or changed (size, mtime, folder image) files are
    /// read; rows of vanished files are dropped.
    @discardableResult
    public func scan() async throws -> ScanSummary {
        let summary = try await scanQueue.run { try self.performScan(scopes: nil).summary }
        measureInBackground()
        return summary
    }

    /// Brings a file that just arrived (a received share) into the index now, by rescanning its folder.
    public func index(_ file: URL) async {
        guard let folder = RawPath(fileURL: file.deletingLastPathComponent().standardizedFileURL) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            scanQueue.async {
                do {
                    _ = try self.performScan(scopes: [folder])
                    self.measureInBackground()
                } catch {
                    self.logger.error("cannot index \(file.path): \(error)")
                }
                continuation.resume()
            }
        }
    }

    // MARK: Watching

    /// Watches every music folder (and each folder below) with inotify; changes are collected for about half a
    /// second after the last one, then the folders they touched are rescanned. Also runs an initial walk to find
    /// the folders (a scan of what changed since the index was last updated).
    public func startWatching(scanNow: Bool = true) throws {
        try watcher.withLock { current in
            guard current == nil else { return }
            let new = try Watcher { [weak self] folders, overflow in
                self?.rescan(folders: overflow ? nil : Array(folders))
            }
            current = new
            new.start()
        }
        if scanNow { rescan(folders: nil) }
    }

    public func stopWatching() {
        let old = watcher.withLock { current -> Watcher? in
            defer { current = nil }
            return current
        }
        old?.stop()
    }

    private func rescan(folders: [RawPath]?) {
        scanQueue.async { [weak self] in
            guard let self else { return }
            do {
                let (_, walked) = try self.performScan(scopes: folders)
                self.watcher.withLock { $0?.add(walked) }
                self.measureInBackground()
            } catch {
                self.logger.error("library rescan failed: \(error)")
            }
        }
    }

    // MARK: Queries

    /// Track artists, sorted case- and accent-insensitively, with their album and track counts.
    public func artists() async throws -> [ArtistSummary] {
        try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT MIN(artist) AS name, COUNT(DISTINCT album_key || char(0) || album_artist_key) AS albums, COUNT(*) AS tracks
                FROM tracks GROUP BY artist_key ORDER BY artist_key, name
                """).map { ArtistSummary(name: $0["name"], albumCount: $0["albums"], trackCount: $0["tracks"]) }
        }
    }

    /// Albums grouped by album title + album artist, sorted by title then album artist; with `artist`, only
    /// albums where that artist is the album artist or plays on a track (compared case- and accent-insensitively).
    public func albums(artist: String? = nil) async throws -> [AlbumSummary] {
        try await database.read { db in
            var sql = """
                SELECT MIN(album) AS title, MIN(album_artist) AS album_artist, MAX(year) AS year, COUNT(*) AS tracks,
                       SUM(duration) AS duration, MIN(art_url) AS art_url
                FROM tracks
                """
            var arguments: StatementArguments = []
            if let artist {
                sql += " WHERE artist_key = ? OR album_artist_key = ?"
                arguments = [foldKey(artist), foldKey(artist)]
            }
            sql += " GROUP BY album_key, album_artist_key ORDER BY album_key, album_artist_key"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map {
                AlbumSummary(title: $0["title"], albumArtist: $0["album_artist"], year: $0["year"], trackCount: $0["tracks"],
                             totalDuration: $0["duration"], artUrl: $0["art_url"])
            }
        }
    }

    static let trackOrder = "COALESCE(disc_number, 1), track_number IS NULL, track_number, title_key, path_key"

    /// An album's tracks in disc, track, title order (any album artist when `albumArtist` is nil).
    public func tracks(album: String, albumArtist: String? = nil) async throws -> [LibraryTrack] {
        try await database.read { db in
            var sql = "SELECT \(Index.trackColumns) FROM tracks WHERE album_key = ?"
            var arguments: StatementArguments = [foldKey(album)]
            if let albumArtist {
                sql += " AND album_artist_key = ?"
                arguments += [foldKey(albumArtist)]
            }
            sql += " ORDER BY \(Self.trackOrder)"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Index.track)
        }
    }

    /// Tracks matching every predicate (case- and accent-insensitively), ordered by artist, album, disc, track
    /// and title; `limit` <= 0 means no limit.
    public func search(_ predicates: [SearchPredicate], offset: Int = 0, limit: Int = 100) async throws -> [LibraryTrack] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        for predicate in predicates {
            let column = switch predicate.field {
            case .title: "title_key"
            case .artist: "artist_key"
            case .album: "album_key"
            case .albumArtist: "album_artist_key"
            case .genre: "genre_key"
            case .year: "COALESCE(CAST(year AS TEXT), '')"
            case .path: "path_key"
            }
            let value = foldKey(predicate.value)
            switch predicate.match {
            case .equals:
                conditions.append("\(column) = ?")
                arguments += [value]
            case .contains:
                conditions.append("instr(\(column), ?) > 0")
                arguments += [value]
            case .startsWith:
                conditions.append("substr(\(column), 1, length(?)) = ?")
                arguments += [value, value]
            }
        }
        var sql = "SELECT \(Index.trackColumns) FROM tracks"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY artist_key, album_key, \(Self.trackOrder) LIMIT ? OFFSET ?"
        arguments += [limit > 0 ? limit : -1, max(0, offset)]
        let query = sql
        let bound = arguments
        return try await database.read { db in
            try Row.fetchAll(db, sql: query, arguments: bound).map(Index.track)
        }
    }

    /// "Today's pick": any indexed track, or nil when the library is empty.
    public func randomTrack() async throws -> LibraryTrack? {
        try await database.read { db in
            try Row.fetchOne(db, sql: """
                SELECT \(Index.trackColumns) FROM tracks
                LIMIT 1 OFFSET (SELECT abs(random()) % max(1, COUNT(*)) FROM tracks)
                """).map(Index.track)
        }
    }

    /// What could not be indexed, and why, by path.
    public func failures() async throws -> [ScanFailure] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT path, reason FROM failures ORDER BY uri").map {
                ScanFailure(path: $0["path"], reason: $0["reason"])
            }
        }
    }

    /// The indexed track at a file URI (any spelling of the same path), if any.
    public func track(at uri: URL) async throws -> LibraryTrack? {
        guard let path = RawPath(fileURL: uri) else { return nil }
        let key = path.uri
        return try await database.read { db in
            // A statement compiled once per connection: each `add` of an MPD client's 10,000 looks a track up, and
            // compiling the query each time (with GRDB's authorizer) was a tenth of the add's time.
            let statement = try db.cachedStatement(sql: "SELECT \(Index.trackColumns) FROM tracks WHERE uri = ?")
            return try Row.fetchOne(statement, arguments: [key]).map(Index.track)
        }
    }

    /// Which scan wrote each row last, by URI (for tests: unchanged rows keep theirs).
    func rowGenerations() async throws -> [String: Int] {
        try await database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT uri, generation FROM tracks").map {
                ($0["uri"] as String, $0["generation"] as Int)
            })
        }
    }

    // MARK: SourcePlugin

    /// File URIs inside the music folders.
    public func canResolve(_ uri: URL) -> Bool {
        guard let path = RawPath(fileURL: uri) else { return false }
        return roots.contains { path.isWithin($0) && path != $0 }
    }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        guard let path = RawPath(fileURL: uri) else { throw TonearmError.unsupportedScheme(uri.absoluteString) }
        if let track = try await track(at: uri) {
            var metadata = track.metadata
            metadata.url = uri.absoluteString
            return metadata
        }
        let key = path.uri
        if let reason = try await database.read({ db in
            try String.fetchOne(db, sql: "SELECT reason FROM failures WHERE uri = ?", arguments: [key])
        }) {
            throw TonearmError(.unsupportedType, "cannot play \(path.string): \(reason)")
        }
        var info = stat()
        guard path.withCString({ stat($0, &info) }) == 0 else { throw TonearmError.noSuchFile(path.string) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw TonearmError.notAFile(path.string) }
        guard path.withCString({ access($0, R_OK) }) == 0 else { throw TonearmError.notReadable(path.string) }
        // Not indexed yet: read it now (milliseconds), so a truncated or broken file is refused with its reason.
        if TagReader.audioExtensions.contains(path.lowercasedExtension), case .failure(let reason) = await readNow(path) {
            throw TonearmError(.unsupportedType, "cannot play \(path.string): \(reason)")
        }
        return TrackMetadata(url: uri.absoluteString, title: path.stem)
    }

    /// Only a file `resolve` did not find in the index: an indexed one came with the index's record, length included,
    /// which `enrich` would read again (a database read for each of 10,000 entries added at once).
    public func needsEnrichment(_ resolved: TrackMetadata) -> Bool { resolved.length == nil }

    /// Index metadata when the file is indexed; else its tags, read now (off the caller's executor).
    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata {
        guard let url = URL(string: metadata.url), let path = RawPath(fileURL: url) else { return metadata }
        // Only files in the music folders are indexed: another one (a file given on the command line) is read at
        // once, without opening the index for it at a start.
        if canResolve(url), let track = try? await track(at: url) {
            var out = track.metadata
            out.url = metadata.url
            return out
        }
        guard case .tags(let tags) = await readNow(path) else { return metadata }
        var out = metadata
        out.title = tags.title
        if !tags.artist.isEmpty { out.artists = [tags.artist] }
        if !tags.album.isEmpty { out.album = tags.album }
        if let albumArtist = tags.albumArtist, !albumArtist.isEmpty { out.albumArtists = [albumArtist] }
        out.trackNumber = tags.trackNumber ?? out.trackNumber
        out.discNumber = tags.discNumber ?? out.discNumber
        if let genre = tags.genre { out.genres = [genre] }
        out.year = tags.year ?? out.year
        out.length = Int64((tags.duration * 1_000_000).rounded())
        if let picture = tags.picture, let art = try? artCache.store(picture) { out.artUrl = art.absoluteString }
        out.loudness = tags.loudness ?? out.loudness
        out.musicBrainz = tags.musicBrainz ?? out.musicBrainz
        return out
    }

    /// Indexed files are known good; others are read now, and a failure is an error a person can act on.
    public func verify(_ uri: URL) async throws {
        guard let path = RawPath(fileURL: uri) else { throw TonearmError.unsupportedScheme(uri.absoluteString) }
        if try await track(at: uri) != nil { return }
        if case .failure(let reason) = await readNow(path) {
            throw TonearmError(.unsupportedType, "cannot play \(path.string): \(reason)")
        }
    }

    private func readNow(_ path: RawPath) async -> TagReader.Outcome {
        await withCheckedContinuation { continuation in
            readQueue.async {
                var info = stat()
                guard path.withCString({ stat($0, &info) }) == 0 else {
                    continuation.resume(returning: .failure("no such file"))
                    return
                }
                continuation.resume(returning: TagReader.read(path, size: Int(info.st_size)))
            }
        }
    }

    /// Starts watching the folders (which also brings the index up to date), then measures the loudness of files
    /// with no gain tags in the background. `[plugins.library] scan-on-start = false` leaves the first scan to `Scan`
    /// (large libraries on slow disks); `measure-loudness = false` turns the measurement off.
    public func start(_ context: PluginContext) async throws {
        // The daemon has read the section already (a bad value stops its start); this reads it the same way.
        let settings = try LibrarySettings(section: context.config)
        if settings.measureLoudness {
            // Held while a track starts: the worker is stopped until the player hears it.
            measurer.withLock { $0 = Measurer(media: context.media, control: MeasurementControl { context.isPlayerStartingTrack }) }
        }
        let scanNow = settings.scanOnStart
        try startWatching(scanNow: scanNow)
        // What an earlier run left (after a scan it starts anyway).
        if !scanNow { measureInBackground() }
    }

    public func stop() async {
        stopWatching()
        measurer.withLock { $0?.control.cancel() }
    }
}

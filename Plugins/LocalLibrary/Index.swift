import Foundation
import RawPaths
import GRDB
import TonearmCore

/// The SQLite index: tracks (one row per file, keyed by its exact URI) and failures, in WAL mode.
enum Index {
    static func open(_ url: URL) throws -> DatabasePool {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = GRDB.Configuration()
        configuration.label = "tonearm.library"
        configuration.busyMode = .timeout(10)
        // Each reader connection keeps a page cache of its own (about 2 MB once used): two are plenty for one
        // player's faces, and the daemon stays lighter than GRDB's default of five.
        configuration.maximumReaderCount = 2
        // In WAL mode NORMAL never corrupts the index; a crash may only lose the last batches, which the
        // next scan reads again. FULL would fsync every batch and halve the scan rate.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            SmartQuery.register(db)
        }
        let pool = try DatabasePool(path: url.path, configuration: configuration)  // WAL
        try migrator.migrate(pool)
        return pool
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE tracks (
                    id INTEGER PRIMARY KEY,
                    uri TEXT NOT NULL UNIQUE,
                    path TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    mtime INTEGER NOT NULL,
                    art_signature TEXT NOT NULL,
                    title TEXT NOT NULL,
                    artist TEXT NOT NULL,
                    album TEXT NOT NULL,
                    album_artist TEXT NOT NULL,
                    genre TEXT,
                    year INTEGER,
                    track_number INTEGER,
                    disc_number INTEGER,
                    duration REAL NOT NULL,
                    art_url TEXT,
                    title_key TEXT NOT NULL,
                    artist_key TEXT NOT NULL,
                    album_key TEXT NOT NULL,
                    album_artist_key TEXT NOT NULL,
                    genre_key TEXT NOT NULL,
                    path_key TEXT NOT NULL,
                    generation INTEGER NOT NULL
                );
                CREATE INDEX tracks_artist ON tracks(artist_key);
                CREATE INDEX tracks_album ON tracks(album_key, album_artist_key);
                CREATE INDEX tracks_album_artist ON tracks(album_artist_key);
                CREATE INDEX tracks_title ON tracks(title_key);
                CREATE TABLE failures (
                    uri TEXT PRIMARY KEY,
                    path TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    mtime INTEGER NOT NULL
                );
                CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v2-loudness") { db in
            // ReplayGain from the tags (dB to −18 LUFS, linear peaks; R128 converted) and Tonearm's own measurement
            // (integrated loudness in LUFS, sample peak; album figures per album), with the measurement's state:
            // 0 to measure, 1 measured, 2 could not be measured, 3 tagged (nothing to measure).
            try db.execute(sql: """
                ALTER TABLE tracks ADD COLUMN rg_track_gain REAL;
                ALTER TABLE tracks ADD COLUMN rg_track_peak REAL;
                ALTER TABLE tracks ADD COLUMN rg_album_gain REAL;
                ALTER TABLE tracks ADD COLUMN rg_album_peak REAL;
                ALTER TABLE tracks ADD COLUMN loudness REAL;
                ALTER TABLE tracks ADD COLUMN peak REAL;
                ALTER TABLE tracks ADD COLUMN album_loudness REAL;
                ALTER TABLE tracks ADD COLUMN album_peak REAL;
                ALTER TABLE tracks ADD COLUMN loudness_state INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE tracks ADD COLUMN loudness_error TEXT;
                CREATE INDEX tracks_loudness_state ON tracks(loudness_state);
                -- Rows scanned before hold no gain tags: the next scan reads every file again.
                UPDATE tracks SET mtime = -1;
                """)
        }
        migrator.registerMigration("v3-history") { db in
            // Listening history, keyed by the file's content (a moved or renamed file keeps it; `uri` is where it was
            // last heard) or, for what is not a local file, by its URI (a live stream's songs by URI and title).
            try db.execute(sql: """
                CREATE TABLE history (
                    key TEXT PRIMARY KEY,
                    uri TEXT NOT NULL,
                    play_count INTEGER NOT NULL DEFAULT 0,
                    skip_count INTEGER NOT NULL DEFAULT 0,
                    first_played REAL,
                    last_played REAL,
                    rating INTEGER
                );
                CREATE INDEX history_uri ON history(uri);
                CREATE TABLE listens (
                    id INTEGER PRIMARY KEY,
                    key TEXT NOT NULL,
                    uri TEXT NOT NULL,
                    title TEXT,
                    artist TEXT,
                    album TEXT,
                    started_at REAL NOT NULL,
                    heard REAL NOT NULL
                );
                CREATE INDEX listens_started ON listens(started_at);
                """)
        }
        migrator.registerMigration("v4-smart") { db in
            // When a track joined the library (seconds since 1970), for smart playlists' `added`; rows from before
            // take their file's modification time.
            try db.execute(sql: """
                ALTER TABLE tracks ADD COLUMN added REAL;
                UPDATE tracks SET added = CASE WHEN mtime > 0 THEN mtime / 1e9 ELSE CAST(strftime('%s', 'now') AS REAL) END;
                CREATE INDEX history_last_played ON history(last_played);
                -- One history row per URI from now on (HistoryStore.claim): where a URI has several, the one heard
                -- last keeps it.
                UPDATE history SET uri = '' WHERE EXISTS (
                    SELECT 1 FROM history o WHERE o.uri = history.uri AND o.key <> history.key
                    AND (COALESCE(o.last_played, 0) > COALESCE(history.last_played, 0)
                         OR (COALESCE(o.last_played, 0) = COALESCE(history.last_played, 0) AND o.key > history.key)));
                """)
        }
        migrator.registerMigration("v5-musicbrainz") { db in
            // MusicBrainz ids from the tags (recording, release track, release, release group, artists), as one JSON
            // text: only scrobbling reads them, never a query.
            try db.execute(sql: """
                ALTER TABLE tracks ADD COLUMN musicbrainz TEXT;
                -- Rows scanned before hold no ids: the next scan reads every file again.
                UPDATE tracks SET mtime = -1;
                """)
        }
        return migrator
    }

    /// `loudness_state` values.
    enum LoudnessState: Int {
        case pending = 0, measured = 1, failed = 2, tagged = 3
    }

    static let trackColumns = "uri, path, title, artist, album, album_artist, genre, year, track_number, disc_number, duration, art_url, "
        + "rg_track_gain, rg_track_peak, rg_album_gain, rg_album_peak, loudness, peak, album_loudness, album_peak, musicbrainz"

    /// A row that begins with `trackColumns`, read by position: GRDB's lookup by name compares every column name
    /// without case, for every row, which was most of the cost of reading thousands of tracks.
    static func track(_ row: Row) -> LibraryTrack {
        let artUrl: String? = row[11]
        return LibraryTrack(
            path: row[1], uri: row[0], title: row[2], artist: row[3], album: row[4],
            albumArtist: row[5], genre: row[6], year: row[7], trackNumber: row[8],
            discNumber: row[9], duration: row[10], hasCover: artUrl != nil, artUrl: artUrl,
            loudness: loudness(row), musicBrainz: MusicBrainzIDs(stored: row[20]))
    }

    /// Tags first; what they lack is filled from the measurement (an album gain measured for a track tagged with
    /// its track gain only).
    static func loudness(_ row: Row) -> TrackLoudness? {
        var tagged = TrackLoudness(trackGain: row[12], trackPeak: row[13], albumGain: row[14], albumPeak: row[15], source: .tags)
        let loudness: Double? = row[16]
        let albumLoudness: Double? = row[18]
        let measured = TrackLoudness(trackGain: loudness.map(TrackLoudness.gain(forLoudness:)), trackPeak: row[17],
                                     albumGain: albumLoudness.map(TrackLoudness.gain(forLoudness:)), albumPeak: row[19],
                                     source: .measured)
        if tagged.isEmpty { return measured.isEmpty ? nil : measured }
        if tagged.trackGain == nil { tagged.trackGain = measured.trackGain; tagged.trackPeak = tagged.trackPeak ?? measured.trackPeak }
        if tagged.albumGain == nil { tagged.albumGain = measured.albumGain; tagged.albumPeak = tagged.albumPeak ?? measured.albumPeak }
        return tagged
    }

    /// SQL for the rows whose URI is `uri` or lies beneath it (URIs are ASCII; '0' follows '/').
    static let withinClause = "(uri = ? OR (uri > ? AND uri < ?))"

    static func withinArguments(_ path: RawPath) -> StatementArguments {
        let uri = path.uri
        return [uri, uri + "/", uri + "0"]
    }
}

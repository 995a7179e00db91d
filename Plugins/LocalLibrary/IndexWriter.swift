import Foundation
import RawPaths
import GRDB
// SQLite's C API, which GRDB is built on: rows are bound straight to the prepared statement (see `RowBinder`).
import GRDBSQLite

/// Writes a scan's results into the index. Statements are prepared once per connection (GRDB's statement cache)
/// rather than compiled for every row, and folded keys are remembered: artists, albums and genres repeat from row
/// to row, and folding is the costly part of a row.
struct IndexWriter {
    let generation: Int
    private var folded: [String: String] = [:]
    /// The folder (with its trailing `/`) of the last path folded, and its key.
    private var lastFolder: (bytes: [UInt8], key: String)?

    init(generation: Int) { self.generation = generation }

    static let columns = ["uri", "path", "size", "mtime", "art_signature", "title", "artist", "album", "album_artist", "genre",
                          "year", "track_number", "disc_number", "duration", "art_url", "title_key", "artist_key", "album_key",
                          "album_artist_key", "genre_key", "path_key", "generation",
                          "rg_track_gain", "rg_track_peak", "rg_album_gain", "rg_album_peak", "loudness_state",
                          "loudness", "peak", "album_loudness", "album_peak", "loudness_error",
                          "musicbrainz"]
    /// A new row also says when it joined the library (`added`, kept by later updates).
    static let insertTrack = "INSERT INTO tracks (\((columns + ["added"]).joined(separator: ", "))) VALUES (\((columns + ["added"]).map { _ in "?" }.joined(separator: ", ")))"
    static let updateTrack = "UPDATE tracks SET \(columns.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")) WHERE uri = ?"

    /// `foldKey(text)`, remembered for the rest of the scan (up to a few thousand values at a time).
    mutating func key(_ text: String) -> String {
        if let key = folded[text] { return key }
        let key = foldKey(text)
        if folded.count >= 4096 { folded.removeAll(keepingCapacity: true) }
        folded[text] = key
        return key
    }

    /// `foldKey(path.string)`, with the folder's part folded once for all the files in it.
    ///
    /// Folding works on whole characters, and a character never spans the last `/` when an ASCII byte follows it
    /// (only combining marks and the like join a character to the one before), so the two parts fold apart.
    mutating func pathKey(_ path: RawPath) -> String {
        let bytes = path.bytes
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash + 1 < bytes.count, bytes[slash + 1] < 0x80 else {
            return foldKey(path.string)
        }
        let folder = bytes[...slash]
        if lastFolder.map({ !$0.bytes.elementsEqual(folder) }) ?? true {
            lastFolder = (Array(folder), foldKey(String(decoding: folder, as: UTF8.self)))
        }
        return lastFolder!.key + foldKey(String(decoding: bytes[(slash + 1)...], as: UTF8.self))
    }

    /// Inserts the file's row, or updates it when it `exists`; a failure recorded for it (`hadFailure`) is dropped.
    mutating func writeTrack(_ db: Database, file: FoundFile, tags: FileTags, artUrl: String?, exists: Bool,
                             hadFailure: Bool) throws {
        let albumArtist = tags.albumArtist ?? tags.artist
        let path = file.path.string
        let statement = try db.cachedStatement(sql: exists ? Self.updateTrack : Self.insertTrack)
        var row = RowBinder(statement)
        if !exists { row.bind(file.uri) }
        row.bind(path)
        row.bind(file.size)
        row.bind(file.mtime)
        row.bind(file.folderImage?.signature ?? "")
        row.bind(tags.title)
        row.bind(tags.artist)
        row.bind(tags.album)
        row.bind(albumArtist)
        row.bind(tags.genre)
        row.bind(tags.year)
        row.bind(tags.trackNumber)
        row.bind(tags.discNumber)
        row.bind(tags.duration)
        row.bind(artUrl)
        row.bind(key(tags.title))
        row.bind(key(tags.artist))
        row.bind(key(tags.album))
        row.bind(key(albumArtist))
        row.bind(key(tags.genre ?? ""))
        row.bind(pathKey(file.path))
        row.bind(generation)
        // A new or changed file: its measurement (if any) no longer holds; files without a track gain are measured.
        let gains = tags.loudness
        row.bind(gains?.trackGain)
        row.bind(gains?.trackPeak)
        row.bind(gains?.albumGain)
        row.bind(gains?.albumPeak)
        row.bind(gains?.trackGain == nil ? Index.LoudnessState.pending.rawValue : Index.LoudnessState.tagged.rawValue)
        row.bindNull()
        row.bindNull()
        row.bindNull()
        row.bindNull()
        row.bindNull()
        row.bind(tags.musicBrainz?.stored)
        if exists { row.bind(file.uri) } else { row.bind(Date().timeIntervalSince1970) }
        try statement.execute()
        if hadFailure { try deleteFailure(db, uri: file.uri) }
    }

    /// Records why the file cannot be indexed, and drops its row when it had one (`exists`).
    func writeFailure(_ db: Database, file: FoundFile, reason: String, exists: Bool) throws {
        try recordFailure(db, uri: file.uri, path: file.path.string, reason: reason, size: file.size, mtime: file.mtime)
        if exists { try deleteTrack(db, uri: file.uri) }
    }

    func recordFailure(_ db: Database, uri: String, path: String, reason: String, size: Int, mtime: Int64) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO failures (uri, path, reason, size, mtime) VALUES (?, ?, ?, ?, ?)")
        try statement.execute(arguments: [uri, path, reason, size, mtime])
    }

    func deleteTrack(_ db: Database, uri: String) throws {
        try db.cachedStatement(sql: "DELETE FROM tracks WHERE uri = ?").execute(arguments: [uri])
    }

    func deleteFailure(_ db: Database, uri: String) throws {
        try db.cachedStatement(sql: "DELETE FROM failures WHERE uri = ?").execute(arguments: [uri])
    }
}

/// Binds one row's values, in order, straight to a GRDB statement's SQLite statement.
///
/// GRDB's `StatementArguments` box every value and map them through generic code, which cost more than the insert
/// itself for the twenty-odd columns of a track row. The values stored are the same as GRDB's: text, integers,
/// reals, NULL for nil.
struct RowBinder {
    private let statement: OpaquePointer
    private var index: CInt = 0

    /// Readies `statement` for new bindings. GRDB is told its arguments are set (empty, unchecked), so that
    /// `execute()` keeps the ones bound here.
    init(_ statement: Statement) {
        self.statement = statement.sqliteStatement
        // A failed step leaves its error to the next reset; GRDB threw it already, and its own reset must succeed.
        sqlite3_reset(self.statement)
        statement.setUncheckedArguments(StatementArguments())
    }

    /// SQLite copies the bytes at once (SQLITE_TRANSIENT).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    mutating func bind(_ value: String) {
        index += 1
        var text = value
        let code = text.withUTF8 { utf8 in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, Self.transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(statement, index, $0, CInt(utf8.count), Self.transient)
            }
        }
        check(code)
    }

    mutating func bind(_ value: String?) {
        if let value { bind(value) } else { bindNull() }
    }

    mutating func bind(_ value: Int) { bind(Int64(value)) }

    mutating func bind(_ value: Int?) {
        if let value { bind(Int64(value)) } else { bindNull() }
    }

    mutating func bind(_ value: Int64) {
        index += 1
        check(sqlite3_bind_int64(statement, index, value))
    }

    mutating func bind(_ value: Double?) {
        if let value { bind(value) } else { bindNull() }
    }

    mutating func bind(_ value: Double) {
        index += 1
        check(sqlite3_bind_double(statement, index, value))
    }

    mutating func bindNull() {
        index += 1
        check(sqlite3_bind_null(statement, index))
    }

    /// Binding touches no file; it fails only on a wrong index or type, a programming error (as in GRDB).
    private func check(_ code: CInt) {
        precondition(code == SQLITE_OK, "cannot bind argument \(index): SQLite error \(code)")
    }
}

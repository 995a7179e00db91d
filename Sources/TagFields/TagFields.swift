import CTagFields
import Glibc

/// Tag fields of an audio file as TagLib's property map names them (REPLAYGAIN_TRACK_GAIN,
/// R128_TRACK_GAIN, LYRICS, …), for every format TagLib reads.
public enum TagFields {
    /// One synchronised lyrics line from an ID3v2 SYLT frame.
    public struct SyncedText: Sendable, Equatable {
        public var milliseconds: UInt32
        public var text: String
        public init(milliseconds: UInt32, text: String) {
            self.milliseconds = milliseconds
            self.text = text
        }
    }

    /// Why a file's tags could not be read or written.
    public enum Failure: Error, Equatable {
        case unreadable(String)
        case notSaved(String)
    }

    /// What the library takes from an audio file: the basic tags, the audio properties and every field.
    public struct File: Sendable {
        public var title = "", artist = "", album = "", genre = ""
        /// 0 when not tagged.
        public var year = 0, track = 0
        /// 0 when unknown.
        public var sampleRate = 0, lengthSeconds = 0
        public var fields: [String: [String]] = [:]
    }

    /// Reads `path` (its bytes as they are: a file name need not be UTF-8) with one read-only open (a file opened for
    /// writing tells every inotify watcher it was written when closed); nil when TagLib cannot read it as an audio file.
    public static func readFile(_ path: UnsafePointer<CChar>) -> File? {
        var file = tonearm_tag_file()
        guard tonearm_tag_file_read(path, &file) == 0 else { return nil }
        defer { tonearm_tag_file_free(&file) }
        func text(_ p: UnsafeMutablePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        var result = File(title: text(file.title), artist: text(file.artist), album: text(file.album), genre: text(file.genre),
                          year: Int(file.year), track: Int(file.track),
                          sampleRate: Int(file.sample_rate), lengthSeconds: Int(file.length_seconds))
        result.fields = fields(file.fields, file.field_count)
        return result
    }

    private static func fields(_ fields: UnsafeMutablePointer<tonearm_tag_field>?, _ count: Int) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for i in 0..<count {
            guard let field = fields?[i], let key = field.key, let value = field.value else { continue }
            result[String(cString: key), default: []].append(String(cString: value))
        }
        return result
    }

    /// Every field with its values in file order, keys upper-case as TagLib gives them.
    public static func read(_ path: String) throws(Failure) -> [String: [String]] {
        guard let fields = path.withCString({ read($0) }) else { throw .unreadable(path) }
        return fields
    }

    /// `read` of a path given as its bytes (a file name need not be UTF-8); nil when TagLib cannot read it.
    public static func read(_ path: UnsafePointer<CChar>) -> [String: [String]]? {
        var fields: UnsafeMutablePointer<tonearm_tag_field>?
        var count = 0
        guard tonearm_tag_fields_read(path, &fields, &count) == 0 else { return nil }
        defer { tonearm_tag_fields_free(fields, count) }
        return Self.fields(fields, count)
    }

    /// Sets fields (an empty value removes the field) and saves the file in place.
    public static func write(_ path: String, _ changes: [(key: String, value: String)]) throws(Failure) {
        let keys = changes.map { strdup($0.key) }
        let values = changes.map { strdup($0.value) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let rc = keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                tonearm_tag_fields_write(path, k.baseAddress, v.baseAddress, changes.count)
            }
        }
        switch rc {
        case 0: return
        case -1: throw .unreadable(path)
        default: throw .notSaved(path)
        }
    }

    /// ID3v2 SYLT lines of an MPEG, WAV or AIFF file, in file order; empty when there are none (or in any other file).
    public static func syncedLyrics(_ path: String) throws(Failure) -> [SyncedText] {
        guard let lines = path.withCString({ syncedLyrics($0) }) else { throw .unreadable(path) }
        return lines
    }

    /// `syncedLyrics` of a path given as its bytes (a file name need not be UTF-8); nil when TagLib cannot read it.
    public static func syncedLyrics(_ path: UnsafePointer<CChar>) -> [SyncedText]? {
        var lines: UnsafeMutablePointer<tonearm_synced_text>?
        var count = 0
        guard tonearm_tag_synced_lyrics_read(path, &lines, &count) == 0 else { return nil }
        defer { tonearm_tag_synced_lyrics_free(lines, count) }
        return (0..<count).compactMap { i in
            guard let line = lines?[i], let text = line.text else { return nil }
            return SyncedText(milliseconds: line.time_ms, text: String(cString: text))
        }
    }
}

import Foundation
import Glibc
import Lyrics
import RawPaths
import TagFields

/// Lyrics of an audio file found beside it or inside it, in this order: a `.lrc` file with the same base name,
/// an ID3v2 SYLT frame, then a lyrics tag (USLT, Vorbis LYRICS, MP4 ©lyr; read as LRC when it holds line stamps).
public enum LyricsFiles {
    /// Lyrics files larger than this are not lyrics.
    static let sidecarLimit = 1_048_576

    /// The lyrics of the file at `path`; nil when no source has any. Reads files: call it off any latency-critical path.
    public static func find(_ path: String) -> Lyrics? {
        find(RawPath(path))
    }

    /// The lyrics of the file at `path` (its bytes: a name need not be UTF-8); nil when no source has any.
    public static func find(_ path: RawPath) -> Lyrics? {
        if let lrc = sidecar(of: path), let bytes = lrc.contents(upTo: sidecarLimit + 1), bytes.count <= sidecarLimit,
           let lyrics = LRCParser.parse(LegacyText.decode(bytes)), !lyrics.isEmpty {
            return lyrics
        }
        if let synced = path.withCString({ TagFields.syncedLyrics($0) }), !synced.isEmpty {
            let lyrics = Lyrics(lines: syltLines(synced.map { (Int64($0.milliseconds) * 1000, $0.text) }), source: .sylt)
            if !lyrics.isEmpty { return lyrics }
        }
        if let tag = path.withCString({ TagFields.read($0) })?["LYRICS"]?.first(where: { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
            let lyrics = LRCParser.hasTimestamps(tag) ? LRCParser.parse(tag, source: .tag) : Lyrics(plainText: tag, source: .tag)
            if let lyrics, !lyrics.isEmpty { return lyrics }
        }
        return nil
    }

    /// SYLT entries as lines: one line each, unless the entries carry line breaks (syllables with a newline where a
    /// line starts or ends), which are then joined into lines.
    public static func syltLines(_ entries: [(start: Int64, text: String)]) -> [LyricLine] {
        if entries.contains(where: { $0.text.contains("\n") || $0.text.contains("\r") }) {
            return Syllables.join(entries, marks: .init(slashes: false, lineFeedIsParagraph: false))
        }
        return entries.compactMap { entry in
            let text = entry.text.trimmingSpaces()
            return text.isEmpty ? nil : LyricLine(start: entry.start, text: text)
        }
    }

    /// The `.lrc` file beside `path` with its base name: `Song.lrc` first, else one whose name differs only in case
    /// (`song.LRC`), the first in name order.
    public static func sidecar(of path: RawPath) -> RawPath? {
        let folder = path.parent
        let wanted = path.baseName + Array(".lrc".utf8)
        let exact = folder.appending(wanted)
        if exact.isFile { return exact }
        let folded = caseFolded(wanted)
        for name in folder.names() where caseFolded(name) == folded {
            let candidate = folder.appending(name)
            if candidate.isFile { return candidate }
        }
        return nil
    }

    /// A name to compare without case: as text when it is UTF-8 (`É` matches `é`), else its ASCII letters only.
    static func caseFolded(_ name: [UInt8]) -> [UInt8] {
        if let text = String(validating: name, as: UTF8.self) { return Array(text.lowercased().utf8) }
        return name.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
    }
}

/// What the lyrics finder reads of the file system, by the path's bytes.
extension RawPath {
    /// Whether a regular file is there.
    var isFile: Bool {
        var info = stat()
        return withCString { stat($0, &info) } == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The names in this folder, in byte order; empty when it cannot be read.
    func names() -> [[UInt8]] {
        guard let folder = withCString({ opendir($0) }) else { return [] }
        defer { closedir(folder) }
        var names: [[UInt8]] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != Array(".".utf8), name != Array("..".utf8) { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }
}

import Foundation
import Lyrics
import TagFields

/// Lyrics of an audio file found beside it or inside it, in this order: a `.lrc` file with the same base name,
/// an ID3v2 SYLT frame, then a lyrics tag (USLT, Vorbis LYRICS, MP4 ©lyr; read as LRC when it holds line stamps).
public enum LyricsFiles {
    /// Lyrics files larger than this are not lyrics.
    static let sidecarLimit = 1_048_576

    /// The lyrics of the file at `path`; nil when no source has any. Reads files: call it off any latency-critical path.
    public static func find(_ path: String) -> Lyrics? {
        if let lrc = sidecar(of: path), let bytes = read(lrc), let lyrics = LRCParser.parse(LegacyText.decode(bytes)), !lyrics.isEmpty {
            return lyrics
        }
        if let synced = try? TagFields.syncedLyrics(path), !synced.isEmpty {
            let lyrics = Lyrics(lines: syltLines(synced.map { (Int64($0.milliseconds) * 1000, $0.text) }), source: .sylt)
            if !lyrics.isEmpty { return lyrics }
        }
        if let tag = (try? TagFields.read(path))?["LYRICS"]?.first(where: { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
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
    public static func sidecar(of path: String) -> URL? {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        let base = url.deletingPathExtension().lastPathComponent
        let exact = folder.appendingPathComponent(base + ".lrc")
        if isFile(exact.path) { return exact }
        let wanted = (base + ".lrc").lowercased()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return nil }
        for name in names.sorted() where name.lowercased() == wanted {
            let candidate = folder.appendingPathComponent(name)
            if isFile(candidate.path) { return candidate }
        }
        return nil
    }

    private static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func read(_ url: URL) -> [UInt8]? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: sidecarLimit + 1), data.count <= sidecarLimit else { return nil }
        return [UInt8](data)
    }
}

import Foundation
import XMLTree

/// A playlist file's formats.
public enum PlaylistFormat: String, Sendable, CaseIterable {
    case m3u, pls, xspf

    /// The format a file name's extension or an HTTP Content-Type names, if any.
    public static func named(path: String, contentType: String? = nil) -> PlaylistFormat? {
        if let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() {
            switch type {
            case "audio/x-mpegurl", "audio/mpegurl", "application/x-mpegurl", "application/vnd.apple.mpegurl": return .m3u
            case "audio/x-scpls", "application/pls+xml", "audio/scpls": return .pls
            case "application/xspf+xml": return .xspf
            default: break
            }
        }
        switch (path as NSString).pathExtension.lowercased() {
        case "m3u", "m3u8": return .m3u
        case "pls": return .pls
        case "xspf": return .xspf
        default: return nil
        }
    }

    /// The MIME types of playlists, for MPRIS SupportedMimeTypes and the desktop file.
    public static let mimeTypes = ["application/vnd.apple.mpegurl", "application/xspf+xml", "audio/mpegurl", "audio/x-mpegurl", "audio/x-scpls"]
}

/// One entry of a playlist as written: its location (a URI, or a path, maybe relative) and what the list says of it.
public struct PlaylistEntry: Sendable, Equatable {
    public var location: String
    public var title: String?
    /// Seconds, when the list gives a length (M3U's #EXTINF, PLS's LengthN, XSPF's duration); nil when unknown or live.
    public var duration: Double?

    public init(location: String, title: String? = nil, duration: Double? = nil) {
        self.location = location
        self.title = title
        self.duration = duration
    }
}

/// Why a playlist cannot be read.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads M3U/M3U8 (with #EXTINF), PLS and XSPF text into entries. Pure: no I/O.
public enum PlaylistParser {
    /// Text from bytes: UTF-8 (a BOM dropped), else Windows-1252 as old .m3u files are written.
    public static func text(_ data: Data) -> String {
        var bytes = data
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return String(data: bytes, encoding: .utf8) ?? String(data: bytes, encoding: .windowsCP1252) ?? String(decoding: bytes, as: UTF8.self)
    }

    /// Whether an M3U8 is an HTTP Live Streaming playlist (segments of one stream, for GStreamer's hlsdemux) rather
    /// than a list of tracks.
    public static func isHLS(_ text: String) -> Bool {
        text.contains("#EXT-X-TARGETDURATION") || text.contains("#EXT-X-STREAM-INF") || text.contains("#EXT-X-MEDIA-SEQUENCE")
    }

    /// The format the content itself shows, when the name and the server say nothing.
    public static func sniff(_ text: String) -> PlaylistFormat? {
        let head = text.prefix(512).trimmingCharacters(in: .whitespacesAndNewlines)
        if head.hasPrefix("#EXTM3U") { return .m3u }
        if head.lowercased().hasPrefix("[playlist]") { return .pls }
        if head.hasPrefix("<?xml") || head.hasPrefix("<playlist"), head.contains("xspf.org/ns/0/") { return .xspf }
        return nil
    }

    /// The entries of `text`, in order; at most `maximumEntries` (more is an error, not a cut list).
    public static func parse(_ text: String, format: PlaylistFormat, maximumEntries: Int = 100_000) throws(PlaylistError) -> [PlaylistEntry] {
        let entries: [PlaylistEntry]
        switch format {
        case .m3u: entries = m3u(text)
        case .pls: entries = try pls(text)
        case .xspf: entries = try xspf(text)
        }
        guard entries.count <= maximumEntries else {
            throw PlaylistError("the playlist has \(entries.count) entries, more than the \(maximumEntries) allowed")
        }
        return entries
    }

    static func lines(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
    }

    static func m3u(_ text: String) -> [PlaylistEntry] {
        var entries: [PlaylistEntry] = []
        var pending: (title: String?, duration: Double?)?
        for raw in lines(text) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if line.hasPrefix("#EXTINF:") {
                    // #EXTINF:seconds[ attributes],Artist - Title; -1 (or 0) for a live stream.
                    let body = line.dropFirst("#EXTINF:".count)
                    // The title follows the first comma outside quoted attributes (tvg-name="a, b").
                    var inQuotes = false
                    let comma = body.firstIndex { c in
                        if c == "\"" { inQuotes.toggle() }
                        return c == "," && !inQuotes
                    }
                    let head = comma.map { body[..<$0] } ?? body
                    let seconds = head.split(separator: " ").first.flatMap { Double($0) }
                    let title = comma.map { String(body[body.index(after: $0)...]).trimmingCharacters(in: .whitespaces) }
                    pending = (title?.isEmpty == false ? title : nil, seconds.flatMap { $0 > 0 ? $0 : nil })
                }
                continue
            }
            entries.append(PlaylistEntry(location: line, title: pending?.title, duration: pending?.duration))
            pending = nil
        }
        return entries
    }

    static func pls(_ text: String) throws(PlaylistError) -> [PlaylistEntry] {
        var files: [Int: String] = [:], titles: [Int: String] = [:], lengths: [Int: Double] = [:]
        var sawHeader = false
        for raw in lines(text) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.lowercased() == "[playlist]" { sawHeader = true; continue }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            for (prefix, store) in [("file", 0), ("title", 1), ("length", 2)] where key.hasPrefix(prefix) {
                guard let n = Int(key.dropFirst(prefix.count)) else { continue }
                switch store {
                case 0: files[n] = value
                case 1: titles[n] = value
                default: if let d = Double(value), d > 0 { lengths[n] = d }
                }
            }
        }
        guard sawHeader else { throw PlaylistError("not a PLS playlist: no [playlist] section") }
        return files.keys.sorted().compactMap { n in
            guard let file = files[n], !file.isEmpty else { return nil }
            return PlaylistEntry(location: file, title: titles[n].flatMap { $0.isEmpty ? nil : $0 }, duration: lengths[n])
        }
    }

    static func xspf(_ text: String) throws(PlaylistError) -> [PlaylistEntry] {
        let root: XMLElement
        do {
            root = try XMLElement.parse(text, maximumElements: 500_000, doctype: .skipped)
        } catch {
            throw PlaylistError("not a valid XSPF playlist: \(error)")
        }
        guard root.name == "playlist" else { throw PlaylistError("not an XSPF playlist: no <playlist> element") }
        let tracks = root.children.filter { $0.name == "trackList" }.flatMap(\.children).filter { $0.name == "track" }
        return tracks.compactMap(xspfEntry)
    }

    /// A track's first non-empty `location`, with `creator - title` and `duration` (ms) when given.
    private static func xspfEntry(_ track: XMLElement) -> PlaylistEntry? {
        func values(_ name: String) -> [String] {
            track.children.filter { $0.name == name }.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        guard let location = values("location").first(where: { !$0.isEmpty }) else { return nil }
        let title = [values("creator").last, values("title").last].compactMap { $0 }.filter { !$0.isEmpty }
            .joined(separator: " - ")
        let duration = values("duration").last.flatMap(Double.init).flatMap { $0 > 0 ? $0 / 1000 : nil }
        return PlaylistEntry(location: location, title: title.isEmpty ? nil : title, duration: duration)
    }
}

/// Where a playlist's entries point, resolved against the playlist's own location, with the network rule.
public enum PlaylistLocations {
    /// The network schemes a stream may use.
    public static let networkSchemes: Set<String> = ["http", "https", "icy", "icyx"]

    /// The URI an entry names: absolute URIs as they are, absolute paths as file URIs, and relative ones against
    /// `base` (the playlist's URL: its folder for a file, its URL for the network). A playlist read from the network
    /// may name only network entries: never a local path or a file URI.
    public static func resolve(_ location: String, against base: URL) -> Result<String, PlaylistError> {
        let fromNetwork = base.scheme.map { networkSchemes.contains($0.lowercased()) } ?? false
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        var resolved: URL?
        if let colon = trimmed.firstIndex(of: ":"), trimmed[..<colon].count >= 2,
           trimmed[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) {
            resolved = URL(string: trimmed)
        } else if trimmed.hasPrefix("/") {
            resolved = URL(fileURLWithPath: trimmed)
        } else if base.isFileURL {
            resolved = URL(fileURLWithPath: trimmed.replacingOccurrences(of: "\\", with: "/"),
                           relativeTo: base.deletingLastPathComponent()).standardizedFileURL
        } else {
            let escaped = trimmed.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.union(.urlQueryAllowed)) ?? trimmed
            resolved = URL(string: escaped, relativeTo: base)?.absoluteURL
        }
        guard let url = resolved, let scheme = url.scheme?.lowercased() else {
            return .failure(PlaylistError("not a URI or path: \(location)"))
        }
        if fromNetwork, !networkSchemes.contains(scheme) {
            return .failure(PlaylistError("a playlist from the network may name only network streams, not \(location)"))
        }
        return .success(url.isFileURL ? url.standardizedFileURL.absoluteString : url.absoluteString)
    }
}

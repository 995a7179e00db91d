import Foundation
import TonearmCore

/// An album: the tracks sharing an album title and album artist (compared case- and accent-insensitively).
public struct AlbumSummary: Sendable, Codable, Equatable {
    public var title: String
    public var albumArtist: String
    /// The latest year any of its tracks names.
    public var year: Int?
    public var trackCount: Int
    /// Seconds.
    public var totalDuration: Double
    public var artUrl: String?

    public init(title: String, albumArtist: String, year: Int?, trackCount: Int, totalDuration: Double, artUrl: String?) {
        self.title = title
        self.albumArtist = albumArtist
        self.year = year
        self.trackCount = trackCount
        self.totalDuration = totalDuration
        self.artUrl = artUrl
    }
}

/// A track artist with the number of albums (album + album artist) and tracks they appear on.
public struct ArtistSummary: Sendable, Codable, Equatable {
    public var name: String
    public var albumCount: Int
    public var trackCount: Int

    public init(name: String, albumCount: Int, trackCount: Int) {
        self.name = name
        self.albumCount = albumCount
        self.trackCount = trackCount
    }
}

/// A file or folder that could not be indexed, and why.
public struct ScanFailure: Sendable, Codable, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// What one scan did. `failed` counts the files and folders the scan saw that cannot be indexed
/// (known failures that did not change included).
public struct ScanSummary: Sendable, Codable, Equatable {
    public var added: Int
    public var updated: Int
    public var removed: Int
    public var failed: Int

    public init(added: Int = 0, updated: Int = 0, removed: Int = 0, failed: Int = 0) {
        self.added = added
        self.updated = updated
        self.removed = removed
        self.failed = failed
    }
}

/// What the library tells its listeners.
public enum LibraryEvent: Sendable, Equatable {
    /// `done` of `total` files to read (new or changed) have been read; at most about ten a second.
    case scanProgress(done: Int, total: Int)
    case scanFinished(ScanSummary)
    /// The index changed (after a scan or a watcher update that changed anything).
    case changed
}

/// One condition of a search: a field compared to a value, case- and accent-insensitively.
public struct SearchPredicate: Sendable, Equatable {
    public enum Field: String, Sendable, CaseIterable {
        case title, artist, album, albumArtist, genre, year, path
    }

    public enum Match: String, Sendable {
        case equals, contains, startsWith
    }

    public var field: Field
    public var match: Match
    public var value: String

    public init(field: Field, match: Match, value: String) {
        self.field = field
        self.match = match
        self.value = value
    }

    /// Parses `artist=Bill Evans AND album~blue AND title^So`: `=` equals, `~` contains, `^` starts with;
    /// conditions are joined by `AND` (any case, surrounded by spaces); values run to the next ` AND `.
    /// Field names also accept `albumartist`, `album-artist` and `album_artist`. An empty expression is no condition.
    public static func parse(_ expression: String) throws -> [SearchPredicate] {
        let trimmed = expression.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return [] }
        var parts: [String] = []
        var rest = Substring(trimmed)
        while let range = rest.range(of: " and ", options: .caseInsensitive) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return try parts.map { part in
            let text = part.trimmingCharacters(in: .whitespaces)
            guard let opIndex = text.firstIndex(where: { "=~^".contains($0) }) else {
                throw TonearmError.invalidValue(
                    "search condition '\(text)' has no operator: write FIELD=VALUE (equals), FIELD~VALUE (contains) or FIELD^VALUE (starts with)")
            }
            let name = text[..<opIndex].trimmingCharacters(in: .whitespaces)
            let value = text[text.index(after: opIndex)...].trimmingCharacters(in: .whitespaces)
            let normalized = name.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "_", with: "")
            guard let field = Field.allCases.first(where: { $0.rawValue.lowercased() == normalized }) else {
                throw TonearmError.invalidValue(
                    "unknown search field '\(name)' in '\(text)': use one of \(Field.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard !value.isEmpty else {
                throw TonearmError.invalidValue("search condition '\(text)' has no value after '\(text[opIndex])'")
            }
            let match: Match = switch text[opIndex] {
            case "=": .equals
            case "~": .contains
            default: .startsWith
            }
            return SearchPredicate(field: field, match: match, value: value)
        }
    }
}

/// Folds text for comparison and sorting: case- and accent-insensitive.
func foldKey(_ text: String) -> String {
    // Text of ASCII and common punctuation (dashes, quotes: U+2010–U+2027, U+2030–U+205E, which folding leaves
    // alone) folds to its ASCII lowercase. Done here, that skips Foundation's NSString round trip, which a scan
    // would otherwise pay for several fields of every file.
    var upper = false
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x41...0x5A: upper = true
        case 0...0x7F, 0x2010...0x2027, 0x2030...0x205E: continue
        default: return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        }
    }
    guard upper else { return text }
    return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
}

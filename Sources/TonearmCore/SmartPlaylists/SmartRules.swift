import Foundation

/// A smart playlist: conditions on tags, history and files, an order and a limit, evaluated live by the library.
/// Written as a `.smart` file in the playlists folder; `SmartRulesParser` reads it, README.md documents it.
public struct SmartRules: Sendable, Equatable {
    /// The conditions (the file's top level; `match any` makes it an `any` group).
    public var conditions: SmartGroup
    /// The order, first key first; empty: album order (artist, album, disc, track).
    public var sort: [SmartSort]
    /// A shuffled order instead of `sort`.
    public var random: Bool
    public var limit: SmartLimit?

    public init(conditions: SmartGroup = SmartGroup(), sort: [SmartSort] = [], random: Bool = false, limit: SmartLimit? = nil) {
        self.conditions = conditions
        self.sort = sort
        self.random = random
        self.limit = limit
    }
}

/// Conditions that must all hold (`all`) or of which one must (`any`).
public struct SmartGroup: Sendable, Equatable {
    public enum Kind: String, Sendable { case all, any }
    public var kind: Kind
    public var conditions: [SmartCondition]

    public init(_ kind: Kind = .all, _ conditions: [SmartCondition] = []) {
        self.kind = kind
        self.conditions = conditions
    }
}

/// One line of a group: a rule, or a nested group.
public indirect enum SmartCondition: Sendable, Equatable {
    case rule(SmartRule)
    case group(SmartGroup)
}

/// `field operator value`, e.g. `rating gt 3.5`.
public struct SmartRule: Sendable, Equatable {
    public var field: SmartField
    public var op: SmartOperator
    public var value: SmartValue

    public init(_ field: SmartField, _ op: SmartOperator, _ value: SmartValue) {
        self.field = field
        self.op = op
        self.value = value
    }
}

/// What a rule can look at.
public enum SmartField: String, Sendable, CaseIterable {
    case title, artist, album, albumArtist, genre, path, format
    case year, track, disc, length, rating, playCount, skipCount
    case lastPlayed, firstPlayed, added

    public enum Kind: Sendable { case text, number, date }

    public var kind: Kind {
        switch self {
        case .title, .artist, .album, .albumArtist, .genre, .path, .format: .text
        case .year, .track, .disc, .length, .rating, .playCount, .skipCount: .number
        case .lastPlayed, .firstPlayed, .added: .date
        }
    }

    /// The field a name in a rules file means (any case; a few common spellings).
    public init?(name: String) {
        let aliases: [String: SmartField] = ["tracknumber": .track, "discnumber": .disc, "duration": .length, "time": .length,
                                             "plays": .playCount, "skips": .skipCount, "stars": .rating, "date": .year,
                                             "dateadded": .added, "extension": .format, "file": .path]
        let folded = name.lowercased()
        guard let field = Self.allCases.first(where: { $0.rawValue.lowercased() == folded }) ?? aliases[folded] else { return nil }
        self = field
    }

    /// The operators that make sense for this field.
    public var operators: [SmartOperator] {
        switch kind {
        case .text: [.is, .isNot, .contains, .notContains, .startsWith]
        case .number: [.is, .isNot, .gt, .lt]
        case .date: [.inTheLast, .notInTheLast, .gt, .lt]
        }
    }
}

/// How a rule compares.
public enum SmartOperator: String, Sendable, CaseIterable {
    case `is`, isNot, contains, notContains, startsWith, gt, lt, inTheLast, notInTheLast

    /// The operator a word in a rules file means (any case, or =, !=, >, <).
    public init?(word: String) {
        let symbols: [String: SmartOperator] = ["=": .is, "==": .is, "!=": .isNot, ">": .gt, "<": .lt]
        let folded = word.lowercased()
        guard let op = Self.allCases.first(where: { $0.rawValue.lowercased() == folded }) ?? symbols[word] else { return nil }
        self = op
    }
}

/// A rule's value, of the kind its field and operator take.
public enum SmartValue: Sendable, Equatable {
    case text(String)
    /// A number: a year, a count, seconds for `length`, stars (0–5) for `rating`.
    case number(Double)
    /// A day (`gt`/`lt` on a date field), as yyyy-mm-dd in local time.
    case day(year: Int, month: Int, day: Int)
    /// A span back from now (`inTheLast`, `notInTheLast`), in seconds.
    case span(TimeInterval)
}

/// One sort key.
public struct SmartSort: Sendable, Equatable {
    public var field: SmartField
    public var descending: Bool

    public init(_ field: SmartField, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}

/// How much of what matches is kept, in the playlist's order.
public enum SmartLimit: Sendable, Equatable {
    case tracks(Int)
    /// As many tracks as fit in this many seconds.
    case seconds(TimeInterval)
}

/// A rules file that cannot be read: the line and the reason.
public struct SmartRulesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based.
    public var line: Int
    public var reason: String

    public init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}

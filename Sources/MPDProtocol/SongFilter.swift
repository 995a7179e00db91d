import Foundation

/// A song filter: mpd 0.21's filter expressions (`(Artist == "x")`, `(!…)`, `(… AND …)`, `contains`,
/// `starts_with`, `=~`, `!~`, `file`, `base`, `any`) and the old `TAG VALUE …` pairs.
public indirect enum SongFilter: Sendable, Equatable {
    public enum Operator: String, Sendable, Equatable {
        case equal = "==", notEqual = "!=", contains = "contains", startsWith = "starts_with"
        case regex = "=~", notRegex = "!~"
    }

    /// A tag (canonical name), `any` or `file` compared with a value.
    case compare(field: String, Operator, String)
    /// Songs inside a folder (relative path).
    case base(String)
    case not(SongFilter)
    case and([SongFilter])

    /// Parses the arguments of find/search/count/list…: one expression in parentheses, or TAG VALUE pairs (the old
    /// form, where `find` compares whole values and `search` looks for a part).
    public static func parse(_ arguments: [String], oldFormContains: Bool) throws(MPDAck) -> SongFilter {
        if arguments.count == 1, arguments[0].hasPrefix("(") {
            var parser = Parser(text: Array(arguments[0].unicodeScalars)[...])
            let filter = try parser.expression()
            parser.skipSpace()
            guard parser.text.isEmpty else { throw MPDAck(.arg, "Unparsed garbage after expression") }
            return filter
        }
        guard arguments.count % 2 == 0 else { throw MPDAck(.arg, "Incorrect number of filter arguments") }
        var parts: [SongFilter] = []
        var i = 0
        while i < arguments.count {
            let name = arguments[i], value = arguments[i + 1]
            let field = try fieldName(name)
            if field == "base" {
                parts.append(.base(value))
            } else {
                parts.append(.compare(field: field, oldFormContains ? .contains : .equal, value))
            }
            i += 2
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    static func fieldName(_ name: String) throws(MPDAck) -> String {
        switch name.lowercased() {
        case "any": return "any"
        case "file", "filename": return "file"
        case "base": return "base"
        default:
            guard let tag = MPDSong.canonicalTag(name) else { throw MPDAck(.arg, "Unknown filter type: \(name)") }
            return tag
        }
    }

    /// A test for songs; `foldCase` compares without regard to case (search), else exactly (find).
    public func predicate(foldCase: Bool) throws(MPDAck) -> @Sendable (MPDSong) -> Bool {
        switch self {
        case .base(let folder):
            let prefix = folder.hasSuffix("/") || folder.isEmpty ? folder : folder + "/"
            return { $0.file.hasPrefix(prefix) }
        case .not(let inner):
            let p = try inner.predicate(foldCase: foldCase)
            return { !p($0) }
        case .and(let parts):
            var predicates: [@Sendable (MPDSong) -> Bool] = []
            for part in parts { predicates.append(try part.predicate(foldCase: foldCase)) }
            let all = predicates
            return { song in all.allSatisfy { $0(song) } }
        case .compare(let field, let op, let value):
            let test = try Self.valueTest(op, value, foldCase: foldCase)
            let negative = op == .notEqual || op == .notRegex
            return { song in
                let values: [String] = switch field {
                case "file": [song.file]
                case "any": [song.file] + song.tags.map(\.value)
                default: song.values(field)
                }
                // As in mpd: "!=" holds when no value equals; a missing tag is the empty string.
                let candidates = values.isEmpty ? [""] : values
                return negative ? candidates.allSatisfy(test) : candidates.contains(where: test)
            }
        }
    }

    private static func valueTest(_ op: Operator, _ value: String, foldCase: Bool) throws(MPDAck) -> @Sendable (String) -> Bool {
        let needle = foldCase ? value.lowercased() : value
        let fold: @Sendable (String) -> String
        if foldCase { fold = { $0.lowercased() } } else { fold = { $0 } }
        switch op {
        case .equal: return { (s: String) -> Bool in fold(s) == needle }
        case .notEqual: return { (s: String) -> Bool in fold(s) != needle }
        case .contains: return { (s: String) -> Bool in fold(s).contains(needle) }
        case .startsWith: return { (s: String) -> Bool in fold(s).hasPrefix(needle) }
        case .regex, .notRegex:
            let regex: NSRegularExpression
            do {
                regex = try NSRegularExpression(pattern: value, options: foldCase ? [.caseInsensitive] : [])
            } catch {
                throw MPDAck(.arg, "Invalid regular expression: \(value)")
            }
            let box = RegexBox(regex)
            if op == .regex { return { box.matches($0) } }
            return { !box.matches($0) }
        }
    }

    /// NSRegularExpression is immutable and thread-safe, but not marked Sendable on Linux.
    private final class RegexBox: @unchecked Sendable {
        let regex: NSRegularExpression
        init(_ regex: NSRegularExpression) { self.regex = regex }
        func matches(_ s: String) -> Bool {
            regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        }
    }

    /// A recursive-descent reader of one expression.
    struct Parser {
        var text: ArraySlice<Unicode.Scalar>

        mutating func skipSpace() {
            while let c = text.first, c == " " || c == "\t" { text.removeFirst() }
        }

        mutating func expect(_ c: Unicode.Scalar) throws(MPDAck) {
            skipSpace()
            guard text.first == c else { throw MPDAck(.arg, "'\(c)' expected") }
            text.removeFirst()
        }

        mutating func expression() throws(MPDAck) -> SongFilter {
            try expect("(")
            skipSpace()
            if text.first == "!" {
                text.removeFirst()
                let inner = try expression()
                try expect(")")
                return .not(inner)
            }
            if text.first == "(" {
                var parts = [try expression()]
                while true {
                    skipSpace()
                    if text.first == ")" { text.removeFirst(); break }
                    let word = self.word()
                    guard word == "AND" else { throw MPDAck(.arg, "'AND' expected") }
                    parts.append(try expression())
                }
                return parts.count == 1 ? parts[0] : .and(parts)
            }
            let name = word()
            guard !name.isEmpty else { throw MPDAck(.arg, "Word expected") }
            skipSpace()
            if name.lowercased() == "base" {
                let value = try quoted()
                try expect(")")
                return .base(value)
            }
            if name.lowercased() == "modified-since" || name.lowercased() == "added-since" || name.lowercased() == "audioformat"
                || name.lowercased() == "prio" {
                throw MPDAck(.arg, "'\(name)' filters are not supported by Tonearm")
            }
            let field = try SongFilter.fieldName(name)
            let opText = self.op()
            guard let op = Operator(rawValue: opText) ?? (opText == "eq" ? .equal : nil) else {
                throw MPDAck(.arg, "Unknown filter operator: \(opText)")
            }
            skipSpace()
            let value = try quoted()
            try expect(")")
            return .compare(field: field, op, value)
        }

        mutating func word() -> String {
            var out = ""
            while let c = text.first, c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-" {
                out.unicodeScalars.append(c)
                text.removeFirst()
            }
            return out
        }

        mutating func op() -> String {
            skipSpace()
            if let c = text.first, "=!~".unicodeScalars.contains(c) {
                var out = ""
                while let c = text.first, "=!~".unicodeScalars.contains(c) {
                    out.unicodeScalars.append(c)
                    text.removeFirst()
                }
                return out
            }
            return word()
        }

        mutating func quoted() throws(MPDAck) -> String {
            guard let q = text.first, q == "\"" || q == "'" else { throw MPDAck(.arg, "Quoted string expected") }
            text.removeFirst()
            var out = ""
            while let c = text.popFirst() {
                if c == q { return out }
                if c == "\\" {
                    guard let e = text.popFirst() else { break }
                    out.unicodeScalars.append(e)
                } else {
                    out.unicodeScalars.append(c)
                }
            }
            throw MPDAck(.arg, "Closing quote not found")
        }
    }
}

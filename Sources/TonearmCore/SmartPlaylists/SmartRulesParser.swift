import Foundation

/// Reads a `.smart` rules file. One statement per line; `#` starts a comment line:
///
///     match all                      # or: match any (the default is all)
///     rating gt 3.5
///     lastPlayed notInTheLast 30 days
///     any                            # a nested group: its conditions are indented below it
///       genre is Jazz
///       genre contains blues
///     sort rating desc, lastPlayed   # or: sort random
///     limit 50                       # or: limit 2 hours
///
/// The first error stops the reading and names its line.
public enum SmartRulesParser {
    public static func parse(_ text: String) throws(SmartRulesError) -> SmartRules {
        let root = Node(kind: .all, indent: -1, line: 0)
        var stack = [root]
        var rules = SmartRules()
        var sawMatch = false, sawSort = false, sawLimit = false, sawCondition = false
        // "\r\n" is one Character in Swift, and a newline.
        for (index, content) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = index + 1
            let indent = content.prefix { $0 == " " || $0 == "\t" }.count
            let statement = content.dropFirst(indent).trimmingCharacters(in: .whitespaces)
            if statement.isEmpty || statement.hasPrefix("#") { continue }
            let (word, rest) = Self.firstWord(statement)
            switch word.lowercased() {
            case "match":
                guard indent == 0, !sawMatch, !sawCondition else {
                    throw SmartRulesError(line: line, "'match all' or 'match any' goes once, on the first line, unindented")
                }
                guard let kind = SmartGroup.Kind(rawValue: rest.lowercased()) else {
                    throw SmartRulesError(line: line, "'match' takes all or any, not '\(rest)'")
                }
                root.kind = kind
                sawMatch = true
            case "all", "any":
                guard rest.isEmpty else {
                    throw SmartRulesError(line: line, "'\(word)' opens a group and stands alone on its line; its conditions go indented below it")
                }
                let group = Node(kind: word.lowercased() == "all" ? .all : .any, indent: indent, line: line)
                Self.parent(for: indent, in: &stack).items.append(.node(group))
                stack.append(group)
                sawCondition = true
            case "sort":
                guard indent == 0, !sawSort else { throw SmartRulesError(line: line, "'sort' goes once, unindented") }
                try Self.readSort(rest, line: line, into: &rules)
                sawSort = true
            case "limit":
                guard indent == 0, !sawLimit else { throw SmartRulesError(line: line, "'limit' goes once, unindented") }
                rules.limit = try Self.readLimit(rest, line: line)
                sawLimit = true
            default:
                let rule = try Self.readRule(word, rest, line: line)
                Self.parent(for: indent, in: &stack).items.append(.rule(rule))
                sawCondition = true
            }
        }
        rules.conditions = try root.group()
        return rules
    }

    /// The group a line indented by `indent` belongs to: the innermost open one indented less.
    private static func parent(for indent: Int, in stack: inout [Node]) -> Node {
        while stack.count > 1, stack[stack.count - 1].indent >= indent { stack.removeLast() }
        return stack[stack.count - 1]
    }

    private static func firstWord(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (text, "") }
        return (String(text[..<space]), text[space...].trimmingCharacters(in: .whitespaces))
    }

    private static func readRule(_ fieldName: String, _ rest: String, line: Int) throws(SmartRulesError) -> SmartRule {
        guard let field = SmartField(name: fieldName) else {
            throw SmartRulesError(line: line, "unknown field '\(fieldName)' (fields: \(SmartField.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let (opWord, valueText) = firstWord(rest)
        guard !opWord.isEmpty else {
            throw SmartRulesError(line: line, "'\(field.rawValue)' needs an operator and a value, e.g. \(field.rawValue) \(field.operators[0].rawValue) …")
        }
        guard let op = SmartOperator(word: opWord) else {
            throw SmartRulesError(line: line, "unknown operator '\(opWord)' (operators: \(SmartOperator.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard field.operators.contains(op) else {
            throw SmartRulesError(line: line, "'\(op.rawValue)' does not apply to \(field.rawValue), which takes \(field.operators.map(\.rawValue).joined(separator: ", "))")
        }
        return SmartRule(field, op, try readValue(valueText, field: field, op: op, line: line))
    }

    private static func readValue(_ text: String, field: SmartField, op: SmartOperator, line: Int) throws(SmartRulesError) -> SmartValue {
        guard !text.isEmpty else { throw SmartRulesError(line: line, "'\(field.rawValue) \(op.rawValue)' needs a value") }
        switch field.kind {
        case .text:
            return .text(try unquoted(text, line: line))
        case .number:
            let plain = try unquoted(text, line: line)
            if field == .length {
                guard let seconds = seconds(plain) else {
                    throw SmartRulesError(line: line, "a length is seconds, m:ss or h:mm:ss, not '\(plain)'")
                }
                return .number(seconds)
            }
            guard let number = Double(plain), number.isFinite, number >= 0 else {
                throw SmartRulesError(line: line, "\(field.rawValue) takes a number, not '\(plain)'")
            }
            if field == .rating {
                guard number <= 5, (number * 2).rounded() == number * 2 else {
                    throw SmartRulesError(line: line, "a rating is 0 to 5 stars in half stars, not '\(plain)'")
                }
            } else if number.rounded() != number {
                throw SmartRulesError(line: line, "\(field.rawValue) takes a whole number, not '\(plain)'")
            }
            return .number(number)
        case .date:
            let plain = try unquoted(text, line: line)
            if op == .inTheLast || op == .notInTheLast {
                guard let span = span(plain) else {
                    throw SmartRulesError(line: line, "'\(op.rawValue)' takes a span such as 30 days, 2 weeks, 6 months, 1 year or 12 hours, not '\(plain)'")
                }
                return .span(span)
            }
            let parts = plain.split(separator: "-").map { Int($0) }
            guard parts.count == 3, let y = parts[0], let m = parts[1], let d = parts[2], (1...12).contains(m), (1...31).contains(d),
                  DateComponents(calendar: Calendar(identifier: .gregorian), year: y, month: m, day: d).isValidDate else {
                throw SmartRulesError(line: line, "'\(op.rawValue)' on \(field.rawValue) takes a day written 2026-01-31, not '\(plain)'")
            }
            return .day(year: y, month: m, day: d)
        }
    }

    /// A value as written: in double quotes (with \" and \\ inside) or bare.
    private static func unquoted(_ text: String, line: Int) throws(SmartRulesError) -> String {
        guard text.hasPrefix("\"") else { return text }
        var out = "", escaped = false, closed = false
        for ch in text.dropFirst() {
            if closed { throw SmartRulesError(line: line, "nothing may follow the closing quote of \(text)") }
            if escaped {
                out.append(ch)
                escaped = false
            } else if ch == "\\" {
                escaped = true
            } else if ch == "\"" {
                closed = true
            } else {
                out.append(ch)
            }
        }
        guard closed else { throw SmartRulesError(line: line, "a quoted value lacks its closing quote: \(text)") }
        return out
    }

    /// Seconds from 300, 5:00 or 1:02:03.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (i, part) in parts.enumerated() {
            guard let n = Double(part), n.isFinite, n >= 0, i == 0 || (n < 60 && part.count == 2) else { return nil }
            total = total * 60 + n
        }
        return total
    }

    static let units: [(names: [String], seconds: TimeInterval)] = [
        (["h", "hour", "hours"], 3600), (["d", "day", "days"], 86_400), (["w", "week", "weeks"], 7 * 86_400),
        (["mo", "month", "months"], 30 * 86_400), (["y", "year", "years"], 365 * 86_400),
    ]

    /// Seconds from "30 days", "2w", "6 months", "1 year", "12 hours".
    static func span(_ text: String) -> TimeInterval? {
        let digits = text.prefix { $0.isNumber || $0 == "." }
        let unit = text.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        guard let n = Double(digits), n > 0, let match = units.first(where: { $0.names.contains(unit) }) else { return nil }
        return n * match.seconds
    }

    private static func readSort(_ text: String, line: Int, into rules: inout SmartRules) throws(SmartRulesError) {
        if text.lowercased() == "random" {
            rules.random = true
            return
        }
        let keys = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !keys.isEmpty, !keys.contains(where: \.isEmpty) else {
            throw SmartRulesError(line: line, "'sort' takes random or fields with asc or desc, e.g. sort rating desc, title")
        }
        for key in keys {
            let (name, direction) = firstWord(key)
            guard let field = SmartField(name: name) else {
                throw SmartRulesError(line: line, "cannot sort by '\(name)' (fields: \(SmartField.allCases.map(\.rawValue).joined(separator: ", ")), or random)")
            }
            switch direction.lowercased() {
            case "", "asc", "ascending": rules.sort.append(SmartSort(field))
            case "desc", "descending": rules.sort.append(SmartSort(field, descending: true))
            default: throw SmartRulesError(line: line, "a sort direction is asc or desc, not '\(direction)'")
            }
        }
    }

    private static func readLimit(_ text: String, line: Int) throws(SmartRulesError) -> SmartLimit {
        let (number, unit) = firstWord(text)
        let usage = "'limit' takes a number of tracks, minutes or hours, e.g. limit 50 or limit 2 hours"
        guard let n = Double(number), n > 0, n.isFinite else { throw SmartRulesError(line: line, usage) }
        switch unit.lowercased() {
        case "", "track", "tracks", "song", "songs":
            guard n.rounded() == n else { throw SmartRulesError(line: line, usage) }
            return .tracks(Int(n))
        case "min", "minute", "minutes": return .seconds(n * 60)
        case "h", "hour", "hours": return .seconds(n * 3600)
        default: throw SmartRulesError(line: line, usage)
        }
    }

    /// A group while it is being read.
    private final class Node {
        enum Item {
            case rule(SmartRule)
            case node(Node)
        }

        var kind: SmartGroup.Kind
        let indent: Int
        let line: Int
        var items: [Item] = []

        init(kind: SmartGroup.Kind, indent: Int, line: Int) {
            self.kind = kind
            self.indent = indent
            self.line = line
        }

        func group() throws(SmartRulesError) -> SmartGroup {
            if line > 0, items.isEmpty {
                throw SmartRulesError(line: line, "the '\(kind.rawValue)' group has no conditions: indent them below it")
            }
            var conditions: [SmartCondition] = []
            for item in items {
                switch item {
                case .rule(let rule): conditions.append(.rule(rule))
                case .node(let node): conditions.append(.group(try node.group()))
                }
            }
            return SmartGroup(kind, conditions)
        }
    }
}

import Foundation

/// One table of config.toml read with the types each key takes: every settings type (the daemon's sections, each
/// plugin's and each face's) reads through it, so every mistake is reported the same way, "[section] key must be
/// …, not …", and stops the start; `~` is expanded here and nowhere else.
public struct ConfigSection: Sendable {
    /// How the section is written in config.toml: "[plugins.midi]".
    public let name: String
    public let table: [String: ConfigValue]
    let home: String

    /// Refuses keys not in `known`.
    public init(_ name: String, _ table: [String: ConfigValue], known: [String],
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        self.name = name
        self.table = table
        home = environment["HOME"] ?? NSHomeDirectory()
        for key in table.keys.sorted() where !known.contains(key) {
            throw TonearmError(.invalidConfig, "\(name) has no key \"\(key)\" (known: \(known.joined(separator: ", ")))")
        }
    }

    /// The error for `key`: "[section] key must be `what`, not value".
    public func fail(_ key: String, _ what: String) -> TonearmError {
        let value = table[key].map { ", not \($0)" } ?? ""
        return TonearmError(.invalidConfig, "\(name) \(key) must be \(what)\(value)")
    }

    public func bool(_ key: String, _ fallback: Bool) throws(TonearmError) -> Bool {
        switch table[key] {
        case nil: return fallback
        case .bool(let b): return b
        case .some: throw fail(key, "true or false")
        }
    }

    /// A non-empty string, or nil when the key is not set.
    public func string(_ key: String) throws(TonearmError) -> String? {
        switch table[key] {
        case nil: return nil
        case .string(let s) where !s.isEmpty: return s
        case .some: throw fail(key, "a non-empty string")
        }
    }

    public func string(_ key: String, _ fallback: String) throws(TonearmError) -> String {
        try string(key) ?? fallback
    }

    /// A non-empty string of one line (a password, a user agent), or nil when the key is not set.
    public func line(_ key: String) throws(TonearmError) -> String? {
        let text = try string(key)
        if text?.contains(where: \.isNewline) == true { throw fail(key, "one line of text") }
        return text
    }

    /// An IP address written out (not a name to look up); `example` shows one in the error.
    public func ipAddress(_ key: String, _ fallback: String, example: String) throws(TonearmError) -> String {
        let address = try string(key, fallback)
        guard MPDProtocolSettings.isIPAddress(address) else { throw fail(key, "an IP address such as \(example)") }
        return address
    }

    /// One of a fixed set of words.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ fallback: T) throws(TonearmError) -> T where T.RawValue == String {
        guard table[key] != nil else { return fallback }
        guard case .string(let s)? = table[key], let found = T(rawValue: s) else {
            throw fail(key, "one of " + T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
        }
        return found
    }

    /// A number (whole or not) within `range`.
    public func number(_ key: String, _ fallback: Double, _ range: ClosedRange<Double>) throws(TonearmError) -> Double {
        let value: Double
        switch table[key] {
        case nil: return fallback
        case .int(let i): value = Double(i)
        case .double(let d): value = d
        case .some: throw fail(key, "a number from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))")
        }
        guard range.contains(value) else {
            throw fail(key, "a number from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))")
        }
        return value
    }

    /// A whole number within `range`.
    public func integer(_ key: String, _ fallback: Int, _ range: ClosedRange<Int>) throws(TonearmError) -> Int {
        switch table[key] {
        case nil: return fallback
        case .int(let i) where range.contains(i): return i
        case .some: throw fail(key, "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// An absolute path (`~/…` allowed), standardized; nil when the key is not set.
    public func path(_ key: String) throws(TonearmError) -> URL? {
        guard let value = table[key] else { return nil }
        return try path(value, key)
    }

    /// A list of absolute paths; nil when the key is not set.
    public func paths(_ key: String) throws(TonearmError) -> [URL]? {
        guard let value = table[key] else { return nil }
        guard case .array(let items) = value else { throw fail(key, "a list of paths") }
        var list: [URL] = []
        for item in items { list.append(try path(item, key)) }
        return list
    }

    /// A list of non-empty strings; nil when the key is not set.
    public func strings(_ key: String) throws(TonearmError) -> [String]? {
        guard let value = table[key] else { return nil }
        guard case .array(let items) = value else { throw fail(key, "a list of strings") }
        var list: [String] = []
        for item in items {
            guard case .string(let s) = item, !s.isEmpty else { throw fail(key, "a list of non-empty strings") }
            list.append(s)
        }
        return list
    }

    private func path(_ value: ConfigValue, _ key: String) throws(TonearmError) -> URL {
        guard case .string(let written) = value, !written.isEmpty else {
            throw TonearmError(.invalidConfig, "\(name) \(key) must be a path, not \(value)")
        }
        let path = Self.expandingTilde(written, home: home)
        guard path.hasPrefix("/") else {
            throw TonearmError(.invalidConfig, "\(name) \(key) must be an absolute path (or start with ~/), not \"\(written)\"")
        }
        return URL(fileURLWithPath: path).standardizedFileURL
    }

    /// `~` and `~/…` in `home`: the one place config paths are expanded.
    public static func expandingTilde(_ path: String, home: String) -> String {
        path == "~" || path.hasPrefix("~/") ? home + path.dropFirst() : path
    }

    static func text(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }
}

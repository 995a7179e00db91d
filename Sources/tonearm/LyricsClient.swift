import DBus

/// One line of the current track's lyrics as org.tonearm.Player1 gives it.
struct LyricsLineInfo: Sendable, Equatable {
    /// Microseconds; nil when the lyrics are not timed.
    var start: Int64?
    var text: String
    var words: [(start: Int64, text: String)]

    static func == (a: Self, b: Self) -> Bool {
        a.start == b.start && a.text == b.text && a.words.map(\.start) == b.words.map(\.start) && a.words.map(\.text) == b.words.map(\.text)
    }
}

/// The lyrics properties of org.tonearm.Player1.
struct LyricsInfo: Sendable, Equatable {
    var lines: [LyricsLineInfo] = []
    var synced = false
    /// "midi", "lrc", "sylt", "tag", or "" when there are none.
    var source = ""
    /// The line being sung, -1 for none.
    var current = -1

    init() {}

    init(_ properties: [String: DBusValue]) { apply(properties) }

    /// Takes over the values in a GetAll reply or a PropertiesChanged.
    mutating func apply(_ properties: [String: DBusValue]) {
        for (name, value) in properties {
            switch name {
            case "Lyrics":
                lines = (value.unwrapped.arrayValue ?? []).compactMap { item in
                    guard case .structure(let fields) = item.unwrapped, fields.count >= 2 else { return nil }
                    let start = fields[0].looseInt64 ?? -1
                    let words: [(Int64, String)] = fields.count > 2 ? (fields[2].arrayValue ?? []).compactMap { word in
                        guard case .structure(let w) = word.unwrapped, w.count == 2, let s = w[0].looseInt64, let t = w[1].looseString else { return nil }
                        return (s, t)
                    } : []
                    return LyricsLineInfo(start: start < 0 ? nil : start, text: fields[1].looseString ?? "", words: words)
                }
            case "LyricsSynced": synced = value.looseBool ?? synced
            case "LyricsSource": source = value.looseString ?? source
            case "LyricsLine": current = Int(value.looseInt64 ?? -1)
            default: break
            }
        }
    }

    /// The line being sung, if any.
    var currentLine: LyricsLineInfo? { lines.indices.contains(current) ? lines[current] : nil }
}

/// One `LyricsLineChanged` signal.
struct LyricsLineEvent: Sendable, Equatable {
    var trackId: String
    var index: Int
    /// Microseconds; -1 with no line.
    var start: Int64
    var text: String

    init?(_ arguments: [DBusValue]) {
        let a = arguments.map(\.unwrapped)
        guard a.count >= 4, let id = a[0].looseString, let index = a[1].looseInt64, let start = a[2].looseInt64,
              let text = a[3].looseString else { return nil }
        (trackId, self.index, self.start, self.text) = (id, Int(index), start, text)
    }
}

extension PlayerClient {
    /// The current track's lyrics and line.
    func lyrics() async throws -> LyricsInfo {
        LyricsInfo(try await connection.getAllProperties(destination: Self.busName, path: Self.objectPath, interface: Interface.tonearm))
    }

    /// `LyricsLineChanged`: the line being sung, as it changes, after seeks and on track change.
    func lyricsLineChanges() -> AsyncStream<LyricsLineEvent> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Self.busName, path: Self.objectPath, interface: Interface.tonearm, member: "LyricsLineChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    if let event = LyricsLineEvent(signal.arguments) { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// PropertiesChanged on org.tonearm.Player1 (lyrics found for the current track).
    func tonearmPropertyChanges() -> AsyncStream<PropertyChange> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Self.busName, path: Self.objectPath, interface: Interface.properties, member: "PropertiesChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    let arguments = signal.arguments.map(\.unwrapped)
                    guard arguments.count >= 2, arguments[0].looseString == Interface.tonearm else { continue }
                    continuation.yield(PropertyChange(changed: arguments[1].vardictValue ?? [:],
                                                      invalidated: arguments.count > 2 ? arguments[2].looseStrings : []))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

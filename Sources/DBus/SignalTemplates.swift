internal import CDBus

/// Signals built lately, kept to be copied: one sent again with the same arguments (the PropertiesChanged of a
/// PlaybackStatus that flips back and forth) costs a copy instead of a second encoding. libdbus rewrites the header's
/// signature field at every top-level argument it appends, which made a three-argument signal about 86,000
/// instructions; a copy is a few thousand.
struct SignalTemplates: ~Copyable {
    /// What makes two signals the same message.
    struct Key: Equatable {
        var path: String
        var interface: String
        var member: String
        var arguments: [DBusValue]

        /// Signals of one family replace each other: a Tick, whose position is new each time, never pushes out the
        /// PropertiesChanged of a status that will flip back.
        func sameFamily(as other: Key) -> Bool {
            path == other.path && interface == other.interface && member == other.member
                && arguments.first.flatMap(\.stringValue) == other.arguments.first.flatMap(\.stringValue)
        }
    }

    /// How many are kept of one family, and in all; the least recently sent goes first.
    static let perFamily = 4
    static let capacity = 16
    /// Signals holding more values than this are neither kept nor looked for: comparing a track's metadata or a
    /// queue's ids would cost what encoding them does, and they rarely repeat.
    static let maximumValues = 12

    private var kept: [(key: Key, message: MessageBox)] = []

    /// Whether a signal with these arguments is small enough to be kept.
    static func keeps(_ arguments: [DBusValue]) -> Bool {
        var budget = maximumValues
        return arguments.allSatisfy { fits($0, &budget) }
    }

    private static func fits(_ value: DBusValue, _ budget: inout Int) -> Bool {
        budget -= 1
        guard budget >= 0 else { return false }
        switch value {
        case .array(_, let items): return items.allSatisfy { fits($0, &budget) }
        case .dictionary(_, _, let entries): return entries.allSatisfy { fits($0.key, &budget) && fits($0.value, &budget) }
        case .structure(let fields): return fields.allSatisfy { fits($0, &budget) }
        case .variant(let inner): return fits(inner, &budget)
        default: return true
        }
    }

    /// A new, unsent copy of the signal kept for `key`, if there is one.
    mutating func copy(of key: Key) -> MessageBox? {
        guard let index = kept.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = kept.remove(at: index)
        kept.append(entry)
        return dbus_message_copy(entry.message.message).map(MessageBox.init(owning:))
    }

    /// Keeps a copy of `message` (built for `key` and not sent yet: sending locks it and gives it a serial).
    mutating func keep(_ message: MessageBox, for key: Key) {
        guard let copy = dbus_message_copy(message.message) else { return }
        kept.removeAll { $0.key == key }
        kept.append((key, MessageBox(owning: copy)))
        if kept.count(where: { $0.key.sameFamily(as: key) }) > Self.perFamily,
           let oldest = kept.firstIndex(where: { $0.key.sameFamily(as: key) }) {
            kept.remove(at: oldest)
        }
        if kept.count > Self.capacity { kept.removeFirst(kept.count - Self.capacity) }
    }
}

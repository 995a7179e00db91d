import Foundation
import TonearmCore

/// `[plugins.shares]`: where files arrive, where they go, and what the player does with them.
public struct SharesSettings: Sendable, Equatable {
    /// What happens to a received track.
    public enum OnReceive: String, Sendable, CaseIterable {
        /// Appended to the queue.
        case queue
        /// Right after the current track.
        case queueNext = "queue-next"
        /// Played now, after the current track in the queue (the iOS behaviour).
        case play
        /// Only added to the library.
        case add
    }

    /// Whether accepted files leave the inbox.
    public enum Keep: String, Sendable, CaseIterable {
        /// Moved into `received` (the inbox empties).
        case move
        /// Copied; the inbox keeps its files (and rejects stay where they are, with a reason note in `rejected`).
        case copy
    }

    public var inboxes: [URL]
    /// Accepted files, inside the library.
    public var received: URL
    /// Refused files, each beside a text file with the reason.
    public var rejected: URL
    public var keep: Keep
    public var onReceive: OnReceive
    /// How long a closed file's size and time must stay the same before it is taken (writers that reopen).
    public var settle: Duration

    public init(inboxes: [URL], received: URL, rejected: URL, keep: Keep = .move, onReceive: OnReceive = .play,
                settle: Duration = .seconds(2)) {
        self.inboxes = inboxes
        self.received = received
        self.rejected = rejected
        self.keep = keep
        self.onReceive = onReceive
        self.settle = settle
    }

    /// Reads the section. Defaults: inbox `Inbox`, `Received` and `Rejected` inside `musicFolder`; move; play;
    /// 2 seconds.
    public init(section: [String: ConfigValue], musicFolder: URL,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        func path(_ value: ConfigValue, _ key: String) throws(TonearmError) -> URL {
            guard case .string(var p) = value, !p.isEmpty else {
                throw TonearmError(.invalidConfig, "[plugins.shares] \(key) must be a path, not \(value)")
            }
            if p == "~" || p.hasPrefix("~/") { p = home + p.dropFirst() }
            guard p.hasPrefix("/") else {
                throw TonearmError(.invalidConfig, "[plugins.shares] \(key) must be an absolute path (or start with ~/), not \"\(p)\"")
            }
            return URL(fileURLWithPath: p).standardizedFileURL
        }
        func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ fallback: T) throws(TonearmError) -> T where T.RawValue == String {
            guard let value = section[key] else { return fallback }
            guard case .string(let s) = value, let found = T(rawValue: s) else {
                let allowed = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw TonearmError(.invalidConfig, "[plugins.shares] \(key) must be one of \(allowed), not \(value)")
            }
            return found
        }
        if let value = section["inboxes"] {
            guard case .array(let items) = value else {
                throw TonearmError(.invalidConfig, "[plugins.shares] inboxes must be a list of paths, not \(value)")
            }
            var list: [URL] = []
            for item in items { list.append(try path(item, "inboxes")) }
            inboxes = list
        } else {
            inboxes = [musicFolder.appendingPathComponent("Inbox")]
        }
        received = try section["received"].map { v throws(TonearmError) in try path(v, "received") } ?? musicFolder.appendingPathComponent("Received")
        rejected = try section["rejected"].map { v throws(TonearmError) in try path(v, "rejected") } ?? musicFolder.appendingPathComponent("Rejected")
        keep = try choice("import", Keep.move)
        onReceive = try choice("on-receive", OnReceive.play)
        switch section["settle-seconds"] {
        case nil: settle = .seconds(2)
        case .int(let n) where n >= 0 && n <= 600: settle = .seconds(n)
        case .double(let x) where x >= 0 && x <= 600: settle = .milliseconds(Int((x * 1000).rounded()))
        case let other?:
            throw TonearmError(.invalidConfig, "[plugins.shares] settle-seconds must be a number of seconds from 0 to 600, not \(other)")
        }
    }
}

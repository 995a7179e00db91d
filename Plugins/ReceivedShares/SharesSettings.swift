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

    public static let keys = ["inboxes", "received", "rejected", "import", "on-receive", "settle-seconds"]

    /// Reads the section. Defaults: inbox `Inbox`, `Received` and `Rejected` inside `musicFolder`; move; play;
    /// 2 seconds.
    public init(section: [String: ConfigValue], musicFolder: URL,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        let s = try ConfigSection("[plugins.shares]", section, known: Self.keys, environment: environment)
        inboxes = try s.paths("inboxes") ?? [musicFolder.appendingPathComponent("Inbox")]
        received = try s.path("received") ?? musicFolder.appendingPathComponent("Received")
        rejected = try s.path("rejected") ?? musicFolder.appendingPathComponent("Rejected")
        keep = try s.choice("import", Keep.move)
        onReceive = try s.choice("on-receive", OnReceive.play)
        settle = .milliseconds(Int((try s.number("settle-seconds", 2, 0...600) * 1000).rounded()))
    }
}

/// What keeps the queue from running dry: off, tracks like the last ones heard, or a playlist's tracks (a smart
/// playlist's as it selects them then), each added as the queue is about to end.
public enum ContinueMode: Sendable, Equatable {
    case off
    /// Same artist, album artist, genre or decade as the last tracks heard, not heard lately.
    case similar
    /// The next track of the named playlist (in its order) that is not in the queue.
    case playlist(String)

    /// The mode a text names: off, similar, or playlist:NAME.
    public init?(_ text: String) {
        switch text {
        case "off": self = .off
        case "similar": self = .similar
        default:
            guard text.hasPrefix(Self.playlistPrefix), text.count > Self.playlistPrefix.count else { return nil }
            self = .playlist(String(text.dropFirst(Self.playlistPrefix.count)))
        }
    }

    static let playlistPrefix = "playlist:"

    /// As `init` reads it.
    public var text: String {
        switch self {
        case .off: "off"
        case .similar: "similar"
        case .playlist(let name): Self.playlistPrefix + name
        }
    }
}

/// Where a queue about to end finds its next track (the library, and the playlists).
public protocol QueueContinuation: Sendable {
    /// The URI of a track like `recent` (the last heard, newest first), none of `excluding`; nil when nothing fits.
    func continuation(after recent: [TrackMetadata], excluding: Set<String>) async throws -> String?
    /// The URI of the first track of the playlist `name` that is none of `excluding`; nil when none is left; throws
    /// when there is no such playlist or it cannot be read (a smart playlist's rules are wrong).
    func continuation(playlist name: String, excluding: Set<String>) async throws -> String?
}

extension QueueContinuation {
    public func continuation(playlist name: String, excluding: Set<String>) async throws -> String? {
        throw TonearmError(.noSuchPlaylist, "there are no playlists to continue from")
    }
}

/// What keeps the queue from running dry: off, or tracks like the last ones added as it is about to end.
public enum ContinueMode: String, Sendable, CaseIterable, Codable {
    case off
    /// Same artist, album artist, genre or decade as the last tracks heard, not heard lately.
    case similar
}

/// Where a queue about to end finds its next track (the library).
public protocol QueueContinuation: Sendable {
    /// The URI of a track like `recent` (the last heard, newest first), none of `excluding`; nil when nothing fits.
    func continuation(after recent: [TrackMetadata], excluding: Set<String>) async throws -> String?
}

import Foundation
import Logging

/// Where music comes from. A plugin turns URIs into tracks and may feed the queue through its
/// `PluginContext`; it never sees the pipeline or the bus.
public protocol SourcePlugin: Sendable {
    /// A short stable name: its config section is `[plugins.NAME]`, its storage folder is named after it.
    var name: String { get }
    /// Whether this plugin can turn `uri` into a track.
    func canResolve(_ uri: URL) -> Bool
    /// Quick checks and first metadata for a URI; throws a `TonearmError` a person can act on.
    func resolve(_ uri: URL) async throws -> TrackMetadata
    /// Slower, complete metadata (tags, length, cover art); called off the player's path.
    func enrich(_ metadata: TrackMetadata) async -> TrackMetadata
    /// Whether what `resolve` gave is worth an `enrich` (false when it is complete already, as an index's record is).
    func needsEnrichment(_ resolved: TrackMetadata) -> Bool
    /// Checks by content that the URI can be played (for OpenUri, which must refuse what it cannot play).
    func verify(_ uri: URL) async throws
    /// Called when one of its tracks starts to be heard.
    func trackStarted(_ metadata: TrackMetadata) async
    /// The entries of the playlist `uri` names (M3U, PLS, XSPF…), or nil when it is not a playlist this plugin reads;
    /// throws when it is one but cannot be read.
    func expand(_ uri: URL) async throws -> PlaylistExpansion?
    /// A track's metadata once its stream told its tags (a radio station's current song); by default the tags fill in
    /// what they say.
    func applying(_ tags: MediaTags, to metadata: TrackMetadata, artCache: ArtCache) -> TrackMetadata
    /// A track's metadata once the answer to the player's own request for it came (an HTTP status and headers): what
    /// the server says of it (a station's name, a live stream or a file). By default nothing changes.
    func applying(_ response: StreamResponse, to metadata: TrackMetadata) -> TrackMetadata
    /// Whether this plugin can look into why the engine could not play `metadata` (`explainFailure`).
    func explainsFailures(of metadata: TrackMetadata) -> Bool
    /// After the engine failed `metadata` before it was heard: a better-named reason (the server's HTTP status, a
    /// refused connection), or the playlist it turned out to be; nil leaves the engine's reason.
    func explainFailure(of metadata: TrackMetadata) async -> FailureExplanation?
    /// Called once when the daemon starts.
    func start(_ context: PluginContext) async throws
    /// Called once when the daemon stops.
    func stop() async
}

extension SourcePlugin {
    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata { metadata }
    public func needsEnrichment(_ resolved: TrackMetadata) -> Bool { true }
    public func verify(_ uri: URL) async throws {}
    public func trackStarted(_ metadata: TrackMetadata) async {}
    public func expand(_ uri: URL) async throws -> PlaylistExpansion? { nil }
    public func applying(_ tags: MediaTags, to metadata: TrackMetadata, artCache: ArtCache) -> TrackMetadata {
        metadata.merging(tags, artCache: artCache)
    }
    public func applying(_ response: StreamResponse, to metadata: TrackMetadata) -> TrackMetadata { metadata }
    public func explainsFailures(of metadata: TrackMetadata) -> Bool { false }
    public func explainFailure(of metadata: TrackMetadata) async -> FailureExplanation? { nil }
    public func start(_ context: PluginContext) async throws {}
    public func stop() async {}
}

/// The answer to the player's own request for a network track: HTTP status and response headers (names lowercased).
public struct StreamResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]

    public init(status: Int, headers: [String: String]) {
        self.status = status
        self.headers = headers
    }
}

/// What a source found when it looked into a track the engine could not play.
public enum FailureExplanation: Sendable, Equatable {
    /// The reason, better named than the engine could (a 404, a refused connection, an unknown host).
    case error(TonearmError)
    /// It was a playlist after all (served under a name that did not say so): its entries are played instead.
    case playlist(PlaylistExpansion)
}

/// A playlist read into the URIs to queue, with the entries that were skipped and why.
public struct PlaylistExpansion: Sendable, Equatable {
    /// The entries' URIs, in order.
    public var uris: [String]
    /// Entries left out (a local path in a playlist from the network, an entry that is no URI), each with the reason.
    public var skipped: [(location: String, error: TonearmError)]

    public init(uris: [String], skipped: [(location: String, error: TonearmError)] = []) {
        self.uris = uris
        self.skipped = skipped
    }

    public static func == (a: PlaylistExpansion, b: PlaylistExpansion) -> Bool {
        a.uris == b.uris && a.skipped.map(\.location) == b.skipped.map(\.location) && a.skipped.map(\.error) == b.skipped.map(\.error)
    }
}

/// How the player reconnects a live stream that dropped: a bounded number of attempts, waiting longer each time.
public struct StreamReconnectPolicy: Sendable, Equatable {
    /// Attempts before the player gives up and moves on (0: never reconnect).
    public var attempts: Int
    /// The wait before the first attempt; each further one doubles it.
    public var firstDelay: Duration
    /// The longest wait.
    public var maximumDelay: Duration
    /// How long a network stream may sit in an empty buffer, its fill level not moving, before it counts as stalled.
    public var stallTimeout: Duration

    public init(attempts: Int = 5, firstDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30),
                stallTimeout: Duration = .seconds(15)) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
        self.stallTimeout = stallTimeout
    }

    /// The wait before attempt `n` (1-based).
    public func delay(beforeAttempt n: Int) -> Duration {
        var delay = firstDelay
        for _ in 1..<max(1, n) where delay < maximumDelay { delay = delay * 2 }
        return min(delay, maximumDelay)
    }
}

/// What a plugin may do: read its config section, keep files in its folder, hand tracks to the player, and use the
/// media operations (probe, decode check, typefind, export).
public struct PluginContext: Sendable {
    public let pluginName: String
    /// The plugin's `[plugins.NAME]` table (empty when absent).
    public let config: [String: ConfigValue]
    /// A folder of the plugin's own under `$XDG_DATA_HOME/tonearm/`.
    public let storageFolder: URL
    public let logger: Logger
    /// Probe, decode check, typefind and export, without the pipeline.
    public let media: any MediaOperations
    let player: Player

    public init(pluginName: String, config: [String: ConfigValue], storageFolder: URL, logger: Logger, player: Player,
                media: any MediaOperations = GStreamerMedia()) {
        self.pluginName = pluginName
        self.config = config
        self.storageFolder = storageFolder
        self.logger = logger
        self.player = player
        self.media = media
    }

    /// Adds URIs to the queue (at the end, next, or in place of it); returns their track ids.
    public func enqueue(_ uris: [String], at position: PlayQueue.Position = .end) async throws -> [TrackID] {
        try await player.add(uris, at: position)
    }

    /// Plays URIs now, as "Open with" does: checked by content, put after the current track, the first played.
    public func open(_ uris: [String]) async throws -> [TrackID] {
        let (ids, refused) = await player.open(uris)
        if ids.isEmpty, let first = refused.first { throw first.error }
        return ids
    }

    /// Replaces the queue with URIs and plays the first one.
    public func playNow(_ uris: [String]) async throws -> [TrackID] {
        try await player.replaceQueue(uris, play: true)
    }

    /// Whether the player is starting a track now (loaded, not heard yet): background work should hold meanwhile.
    public var isPlayerStartingTrack: Bool { player.isStartingTrack }

    /// Tells the user something happened (a log line for now; signals belong to the plugin's bus face).
    public func announce(_ message: String) {
        logger.notice("\(message)", metadata: ["plugin": "\(pluginName)"])
    }
}

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
    /// Checks by content that the URI can be played (for OpenUri, which must refuse what it cannot play).
    func verify(_ uri: URL) async throws
    /// Called when one of its tracks starts to be heard.
    func trackStarted(_ metadata: TrackMetadata) async
    /// Called once when the daemon starts.
    func start(_ context: PluginContext) async throws
    /// Called once when the daemon stops.
    func stop() async
}

extension SourcePlugin {
    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata { metadata }
    public func verify(_ uri: URL) async throws {}
    public func trackStarted(_ metadata: TrackMetadata) async {}
    public func start(_ context: PluginContext) async throws {}
    public func stop() async {}
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

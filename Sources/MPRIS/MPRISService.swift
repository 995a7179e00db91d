import DBus
import Foundation
import Logging
import Synchronization
import TonearmCore

/// Tonearm's face on the bus: exports the MPRIS and org.tonearm interfaces over the player and the plugins' Swift
/// APIs, and turns player and plugin events into signals and PropertiesChanged.
public final class MPRISService: Sendable {
    public static let busName = "org.mpris.MediaPlayer2.tonearm"
    public static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"
    /// The interfaces whose properties are all read from the player's published state (or are constant), so they
    /// can be answered while the daemon is still starting.
    public static let stateInterfaces: Set<String> = ["org.mpris.MediaPlayer2", playerInterface, trackListInterface,
                                                      TonearmPlayerInterface.name]

    let connection: DBusConnection
    let player: Player
    /// Start forwarding plugin events as signals; the library's subscription is made at init, so a scan that starts
    /// before `run` loses no event.
    let forwarders: [@Sendable () async -> [Task<Void, Never>]]
    let logger: Logger
    /// Turns the player's events into signals.
    let forwarder: EventForwarder
    /// The bus face's hold on the player's events, made at init so that nothing said before `run` is lost: each event
    /// is turned into its signal on the publishing thread and queued on the connection (which never waits), so a
    /// PropertiesChanged leaves with no task to wake in between.
    let listener: EventListener<PlayerEvent>

    /// `media`: what MediaPlayer2 reports as playable. `library` and `shares`: the plugins behind Library1 and
    /// Shares1 (not exported when nil). `browsables`: every source with folders, behind Browser1. `quit`: what
    /// MPRIS Quit does; it is called after the reply is handed over, not awaited by the call. `waveforms`: behind
    /// Player1.Waveform (refused when nil).
    public init(connection: DBusConnection, player: Player, media: any MediaOperations, library: (any LibraryAPI)?,
                browsables: [any BrowsableSource] = [], shares: (any SharesAPI)? = nil, waveforms: WaveformService? = nil,
                playlists: (any PlaylistsAPI)? = nil, webAddress: @escaping @Sendable () -> String? = { nil },
                logger: Logger = Logger(label: "tonearm.mpris"), quit: @escaping @Sendable () async -> Void) {
        self.connection = connection
        self.player = player
        self.logger = logger
        var handlers: [any DBusInterfaceHandler] = [
            MediaPlayer2Interface(media: media, quit: quit),
            PlayerInterface(player: player),
            TrackListInterface(player: player),
            TonearmPlayerInterface(player: player, waveforms: waveforms, webAddress: webAddress),
        ]
        var forwarders: [@Sendable () async -> [Task<Void, Never>]] = []
        if let library {
            handlers.append(Self.libraryInterface(library, player: player))
            let start = Self.libraryForwarder(library, on: connection)
            forwarders.append { [start()] }
        }
        handlers.append(BrowserInterface(sources: browsables, player: player))
        if let shares {
            handlers.append(Self.sharesInterface(shares, player: player))
            forwarders.append(Self.sharesForwarder(shares, on: connection, logger: logger))
        }
        var playlistsFace: PlaylistsFace?
        if let playlists {
            let face = PlaylistsFace(playlists: playlists, player: player, connection: connection)
            face.rememberCount()
            handlers += [PlaylistsInterface(face: face), TonearmPlaylistsInterface(face: face)]
            playlistsFace = face
        }
        self.forwarders = forwarders
        let forwarder = EventForwarder(connection: connection, playlists: playlistsFace)
        self.forwarder = forwarder
        listener = player.events.listen { item in forwarder.forward(item.event) }
        // At debug level (tonearmd --verbose) every call is logged with its sender.
        if logger.logLevel <= .debug { handlers = handlers.map { LoggedInterface(inner: $0, logger: logger) } }
        connection.export(path: Self.objectPath, handlers: handlers)
    }

    private static func libraryInterface<L: LibraryAPI>(_ library: L, player: Player) -> any DBusInterfaceHandler {
        LibraryInterface(library: library, player: player)
    }

    private static func libraryForwarder<L: LibraryAPI>(_ library: L, on connection: DBusConnection) -> @Sendable () -> Task<Void, Never> {
        LibraryInterface.forwarder(library, on: connection, path: objectPath)
    }

    private static func sharesInterface<S: SharesAPI>(_ shares: S, player: Player) -> any DBusInterfaceHandler {
        SharesInterface(shares: shares, player: player)
    }

    /// Shares1 signals, and the senders (KDE Connect, BlueZ) that announce finished transfers.
    private static func sharesForwarder<S: SharesAPI>(_ shares: S, on connection: DBusConnection,
                                                      logger: Logger) -> @Sendable () async -> [Task<Void, Never>] {
        {
            let forwarding = SharesInterface.forward(shares, on: connection, path: objectPath)
            let senders = await SharesInterface.listenToSenders(shares, on: connection)
            // A sender's word that comes before this line is not heard (the file then settles by itself).
            if senders == nil {
                logger.warning("cannot listen for KDE Connect and BlueZ transfers on the session bus")
            } else {
                logger.info("listening for KDE Connect and BlueZ transfers")
            }
            return [forwarding] + (senders.map { [$0] } ?? [])
        }
    }

    /// Forwards player and plugin events to the bus, and returns when the player shuts down or the calling task is
    /// cancelled.
    public func run() async {
        var forwarding: [Task<Void, Never>] = []
        for start in forwarders { forwarding += await start() }
        defer {
            for task in forwarding { task.cancel() }
            listener.cancel()
        }
        await withTaskCancellationHandler {
            await listener.ended()
        } onCancel: {
            listener.cancel()
        }
    }
}

/// Turns player events into signals and PropertiesChanged.
final class EventForwarder: Sendable {
    let connection: DBusConnection
    private struct Sent {
        var properties: [String: DBusValue] = [:]
        /// What `properties`' Metadata was encoded from: while it stays, a change (a pause, the volume) neither encodes
        /// the track again nor compares its tags, on the way to the signal a panel waits for.
        var metadataOf: (track: Track?, lyrics: String?)?
        var tracks: [TrackID]?
        /// The queue version `tracks` was taken at: while it stays, the entries have not changed.
        var tracksVersion: UInt64?
        var continueMode = ContinueMode.off
    }
    private let sent = Mutex(Sent())

    /// Told when the queue is replaced (the active playlist may end).
    let playlists: PlaylistsFace?

    init(connection: DBusConnection, playlists: PlaylistsFace? = nil) {
        self.connection = connection
        self.playlists = playlists
    }

    func forward(_ event: PlayerEvent) {
        let path = MPRISService.objectPath
        switch event {
        case .changed(let snapshot):
            let (changed, tracksChanged) = sent.withLock { sent -> ([String: DBusValue], Bool) in
                let sameTrack = sent.metadataOf.map { $0.track == snapshot.current && $0.lyrics == snapshot.lyricsText } ?? false
                let now = PlayerInterface.properties(snapshot, metadata: sameTrack ? sent.properties["Metadata"] : nil)
                let changed = now.filter { ($0.key != "Metadata" || !sameTrack) && sent.properties[$0.key] != $0.value }
                sent.properties = now
                sent.metadataOf = (snapshot.current, snapshot.lyricsText)
                // A pause must not cost a copy and a comparison of every id in a long queue.
                guard sent.tracksVersion != snapshot.queueVersion else { return (changed, false) }
                sent.tracksVersion = snapshot.queueVersion
                let ids = snapshot.trackIDs
                let tracksChanged = sent.tracks != nil && sent.tracks != ids
                sent.tracks = ids
                return (changed, tracksChanged)
            }
            if !changed.isEmpty {
                connection.emitPropertiesChanged(path: path, interface: MPRISService.playerInterface, changed: changed)
            }
            let mode = snapshot.continueMode
            if sent.withLock({ sent in defer { sent.continueMode = mode }; return sent.continueMode != mode }) {
                connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name, changed: ["Continue": .string(mode.text)])
            }
            if tracksChanged {
                connection.emitPropertiesChanged(path: path, interface: MPRISService.trackListInterface, changed: [:], invalidated: ["Tracks"])
            }
        case .seeked(let position):
            connection.emitSignal(path: path, interface: MPRISService.playerInterface, member: "Seeked", arguments: [.int64(position)])
        case .tick(let id, let position, let length):
            connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "Tick",
                                  arguments: [.objectPath(id.path), .int64(position), .int64(length)])
        case .trackListReplaced(let ids, let current):
            playlists?.queueReplaced(ids)
            connection.emitSignal(path: path, interface: MPRISService.trackListInterface, member: "TrackListReplaced",
                                  arguments: [.objectPathArray(ids.map(\.path)), .objectPath((current ?? .noTrack).path)])
        case .trackAdded(let track, let after):
            connection.emitSignal(path: path, interface: MPRISService.trackListInterface, member: "TrackAdded",
                                  arguments: [MetadataEncoding.encode(track), .objectPath((after ?? .noTrack).path)])
        case .trackRemoved(let id):
            connection.emitSignal(path: path, interface: MPRISService.trackListInterface, member: "TrackRemoved",
                                  arguments: [.objectPath(id.path)])
        case .trackMetadataChanged(let track):
            connection.emitSignal(path: path, interface: MPRISService.trackListInterface, member: "TrackMetadataChanged",
                                  arguments: [.objectPath(track.id.path), MetadataEncoding.encode(track)])
        case .trackFailed(let id, let uri, let error):
            connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "TrackFailed",
                                  arguments: [.objectPath(id.path), .string(uri), .string(error.name), .string(error.message)])
        case .tickIntervalChanged(let interval):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: ["TickInterval": .int64(TonearmPlayerInterface.microseconds(interval))])
        case .lyricsChanged, .lyricsLineChanged:
            LyricsEncoding.forward(event, on: connection, path: path)
        case .buffering(let id, let percent):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name, changed: ["Buffering": .int32(Int32(percent))])
            connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "BufferingChanged",
                                  arguments: [.objectPath(id.path), .int32(Int32(percent))])
        case .replayGainModeChanged(let mode):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: ["ReplayGainMode": .string(mode.rawValue)])
        case .equalizerChanged(let state):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: TonearmPlayerInterface.equalizerProperties(state))
        case .crossfadeChanged(let seconds, let threshold):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: ["Crossfade": .double(seconds), "CrossfadeSilenceThreshold": .double(threshold)])
        case .outputChanged(let name, let problem):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: ["Output": .string(name), "OutputError": .string(problem)])
        case .outputFailed(let name, let message):
            connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "OutputFailed",
                                  arguments: [.string(name), .string(message)])
        case .nowPlaying, .listened:
            break  // for scrobblers; the bus says what plays through Metadata, and the history through the library
        }
    }
}

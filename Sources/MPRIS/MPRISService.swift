import DBus
import Foundation
import LocalLibrary
import Logging
import Playback
import ReceivedShares
import TonearmCore

/// Tonearm's face on the bus: exports the MPRIS and org.tonearm interfaces over the player
/// and turns player events into signals and PropertiesChanged.
public final class MPRISService: Sendable {
    public static let busName = "org.mpris.MediaPlayer2.tonearm"
    public static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"

    let connection: DBusConnection
    let player: Player
    let library: LocalLibrary?
    /// Subscribed at init, so a scan that starts before `run` loses no event.
    let libraryEvents: AsyncStream<LibraryEvent>?
    let shares: ReceivedShares?
    let logger: Logger

    /// `browsables`: sources with folders besides the library (which is browsable itself).
    public init(connection: DBusConnection, player: Player, library: LocalLibrary?, browsables: [any BrowsableSource] = [],
                shares: ReceivedShares? = nil,
                logger: Logger = Logger(label: "tonearm.mpris"), quit: @escaping @Sendable () async -> Void) {
        self.connection = connection
        self.player = player
        self.library = library
        self.shares = shares
        self.libraryEvents = library?.events
        self.logger = logger
        var handlers: [any DBusInterfaceHandler] = [
            MediaPlayer2Interface(quit: quit),
            PlayerInterface(player: player),
            TrackListInterface(player: player),
            TonearmPlayerInterface(player: player),
        ]
        if let library { handlers.append(LibraryInterface(library: library, folders: library.folders)) }
        handlers.append(BrowserInterface(sources: (library.map { [$0] } ?? []) + browsables, player: player))
        if let shares { handlers.append(SharesInterface(shares: shares, player: player)) }
        // At debug level (tonearmd --verbose) every call is logged with its sender.
        if logger.logLevel <= .debug { handlers = handlers.map { LoggedInterface(inner: $0, logger: logger) } }
        connection.export(path: Self.objectPath, handlers: handlers)
    }

    /// Forwards library scan events as org.tonearm.Library1 signals.
    func forwardLibraryEvents() -> Task<Void, Never>? {
        guard let events = libraryEvents else { return nil }
        let connection = connection
        return Task {
            for await event in events {
                switch event {
                case .scanProgress(let done, let total):
                    connection.emitSignal(path: Self.objectPath, interface: LibraryInterface.name, member: "ScanProgress",
                                          arguments: [.uint32(UInt32(clamping: done)), .uint32(UInt32(clamping: total))])
                case .scanFinished(let s):
                    connection.emitSignal(path: Self.objectPath, interface: LibraryInterface.name, member: "ScanFinished",
                                          arguments: [s.added, s.updated, s.removed, s.failed].map { .uint32(UInt32(clamping: $0)) })
                case .changed:
                    break
                }
            }
        }
    }

    /// Forwards player events to the bus until the player shuts down.
    public func run() async {
        let libraryForwarding = forwardLibraryEvents()
        let sharesForwarding = shares.map { SharesInterface.forward($0, on: connection, path: Self.objectPath) }
        let senders = await shares.asyncMap { await SharesInterface.listenToSenders($0, on: connection) } ?? nil
        defer {
            libraryForwarding?.cancel()
            sharesForwarding?.cancel()
            senders?.cancel()
        }
        var sent: [String: DBusValue] = [:]
        var sentTracks: [TrackID]?
        let path = Self.objectPath
        for await event in player.events {
            switch event {
            case .changed(let snapshot):
                let now = PlayerInterface.properties(snapshot)
                let changed = now.filter { sent[$0.key] != $0.value }
                sent = now
                if !changed.isEmpty {
                    connection.emitPropertiesChanged(path: path, interface: Self.playerInterface, changed: changed)
                }
                if sentTracks != snapshot.trackIDs {
                    if sentTracks != nil {
                        connection.emitPropertiesChanged(path: path, interface: Self.trackListInterface, changed: [:], invalidated: ["Tracks"])
                    }
                    sentTracks = snapshot.trackIDs
                }
            case .seeked(let position):
                connection.emitSignal(path: path, interface: Self.playerInterface, member: "Seeked", arguments: [.int64(position)])
            case .tick(let id, let position, let length):
                connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "Tick",
                                      arguments: [.objectPath(id.path), .int64(position), .int64(length)])
            case .trackListReplaced(let ids, let current):
                connection.emitSignal(path: path, interface: Self.trackListInterface, member: "TrackListReplaced",
                                      arguments: [.objectPathArray(ids.map(\.path)), .objectPath((current ?? .noTrack).path)])
            case .trackAdded(let track, let after):
                connection.emitSignal(path: path, interface: Self.trackListInterface, member: "TrackAdded",
                                      arguments: [MetadataEncoding.encode(track), .objectPath((after ?? .noTrack).path)])
            case .trackRemoved(let id):
                connection.emitSignal(path: path, interface: Self.trackListInterface, member: "TrackRemoved",
                                      arguments: [.objectPath(id.path)])
            case .trackMetadataChanged(let track):
                connection.emitSignal(path: path, interface: Self.trackListInterface, member: "TrackMetadataChanged",
                                      arguments: [.objectPath(track.id.path), MetadataEncoding.encode(track)])
            case .trackFailed(let id, let uri, let error):
                connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "TrackFailed",
                                      arguments: [.objectPath(id.path), .string(uri), .string(error.name), .string(error.message)])
            case .tickIntervalChanged(let interval):
                connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                                 changed: ["TickInterval": .int64(TonearmPlayerInterface.microseconds(interval))])
            }
        }
    }
}

extension Optional {
    /// `map` with an async transform.
    func asyncMap<T>(_ transform: (Wrapped) async -> T) async -> T? {
        guard let value = self else { return nil }
        return await transform(value)
    }
}

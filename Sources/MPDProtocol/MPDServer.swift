import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TonearmCore

/// The MPD protocol face: listens on TCP (and a Unix socket when configured) and serves each client over the same
/// player and library as MPRIS. `start` binds, `stop` closes the listeners and every client.
public final class MPDServer: Sendable {
    /// The line length beyond which a client is dropped (mpd's own limit is smaller; filters and URIs fit).
    public static let maximumLineLength = 64 * 1024

    let settings: MPDProtocolSettings
    let player: Player
    let library: (any MPDLibrarySource)?
    let tracker = ChangeTracker()
    let executor: CommandExecutor
    let logger: Logger
    let connections = ConnectionRegistry()
    private let listeners = Mutex<[any Channel]>([])
    private let libraryTask = Mutex<Task<Void, Never>?>(nil)
    /// The face's hold on the player's events.
    private let listener: EventListener<PlayerEvent>

    /// Starts following the player at once (so the playlist version counts every change from now on).
    public init(settings: MPDProtocolSettings, player: Player, library: (any MPDLibrarySource)?,
                playlists: (any MPDPlaylistStore)? = nil, logger: Logger = Logger(label: "tonearm.mpd")) {
        self.settings = settings
        self.player = player
        self.library = library
        self.logger = logger
        executor = CommandExecutor(player: player, library: library, tracker: tracker, password: settings.password,
                                   playlists: playlists)
        let tracker = self.tracker
        // Each event reaches the tracker on the publishing thread (it only updates versions and wakes the clients'
        // event loops), so idle wakes with no task in between, with the same change's PropertiesChanged.
        listener = player.events.listen(first: true) { [tracker] item in tracker.handle(item.event) }
    }

    /// The TCP address actually bound (the port picked when 0 was asked), once started.
    public var boundPort: Int? { listeners.withLock { $0.first?.localAddress?.port } }

    /// Binds the listeners; a failure is logged and leaves the rest of the daemon running.
    public func start() async {
        if let library {
            let changes = library.changes
            let executor = self.executor, tracker = self.tracker
            libraryTask.withLock {
                $0 = Task {
                    for await change in changes {
                        await executor.libraryChanged()
                        tracker.handle(change)
                    }
                }
            }
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 4)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 64 * 1024, high: 256 * 1024))
            .childChannelInitializer { [executor, tracker, connections, settings] channel in
                channel.eventLoop.makeCompletedFuture {
                    // Reads are asked for by the connection handler (see its `read`); it splits lines and times
                    // the connection out itself, one handler per request instead of three.
                    try channel.pipeline.syncOperations.addHandler(MPDConnectionHandler(
                        executor: executor, tracker: tracker, connections: connections,
                        maximumLineLength: Self.maximumLineLength,
                        timeout: .seconds(Int64(settings.connectionTimeout))))
                }
            }
        do {
            let channel = try await bootstrap.bind(host: settings.address, port: settings.port).get()
            listeners.withLock { $0.append(channel) }
            let port = channel.localAddress?.port ?? settings.port
            logger.info("MPD protocol listening on \(settings.address):\(port)")
        } catch {
            logger.error("MPD protocol: cannot listen on \(settings.address):\(settings.port): \(error)")
        }
        if let path = settings.unixSocket {
            do {
                let channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
                listeners.withLock { $0.append(channel) }
                logger.info("MPD protocol listening on \(path)")
            } catch {
                logger.error("MPD protocol: cannot listen on \(path): \(error)")
            }
        }
    }

    /// Closes the listeners and every client connection.
    public func stop() async {
        listener.cancel()
        libraryTask.withLock { $0?.cancel() }
        for channel in listeners.withLock({ l in defer { l = [] }; return l }) {
            try? await channel.close()
        }
        for channel in connections.all() {
            try? await channel.close()
        }
        if let path = settings.unixSocket { unlink(path) }
    }
}

/// The open client connections, so shutdown can close them.
final class ConnectionRegistry: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = channel } }
    func remove(_ channel: any Channel) { _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) } }
    func all() -> [any Channel] { channels.withLock { Array($0.values) } }
    var count: Int { channels.withLock { $0.count } }
}

import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import TonearmCore

/// The request context: the connection, for the controller's address.
struct UPnPContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The controller's IP address, without the IPv4-mapped prefix.
    var remote: String {
        let ip = channel.remoteAddress?.ipAddress ?? ""
        return ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip
    }

    /// This end's address of the connection (the one the controller reached us on).
    var local: String? {
        guard let ip = channel.localAddress?.ipAddress else { return nil }
        return ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip
    }
}

/// A UPnP AV MediaRenderer:1 over the one Player: what a controller casts goes into Tonearm's queue, and the
/// renderer's state is the player's, whoever changed it (MPRIS, the MPD face, the CLI, the web).
public final class UPnPRenderer: Sendable {
    let settings: UPnPSettings
    let player: Player
    let logger: Logger
    /// Where the UUID is kept across starts.
    let storageFolder: URL
    /// What this machine's GStreamer decodes (read from its registry when the renderer starts, off the daemon's start).
    private let mimeTypes: @Sendable () -> [String]
    private let protocolInfo = Mutex("")
    /// What this machine's GStreamer decodes, as http-get protocol infos.
    var sinkProtocolInfo: String { protocolInfo.withLock { $0 } }
    private let memory = Mutex(CastMemory())
    private let udn = Mutex("")
    private let port = Mutex<Int?>(nil)
    /// The variables last evented.
    private let evented = Mutex<RendererVariables?>(nil)
    private let running = Mutex<Running?>(nil)
    let events: EventPublisher

    /// The largest control or event request body taken.
    static let maximumBody = 64 << 10
    /// The largest DIDL-Lite metadata kept with a cast.
    static let maximumMetadata = 32 << 10
    static let deviceType = "urn:schemas-upnp-org:device:MediaRenderer:1"

    private struct Running {
        var group: ServiceGroup
        var server: Task<Void, Never>
        var follower: Task<Void, Never>
        var expiry: Task<Void, Never>
        var ssdp: SSDPServer?
    }

    /// `mimeTypes` is asked once, on a thread of its own, when the renderer starts.
    public init(settings: UPnPSettings, player: Player, mimeTypes: @escaping @Sendable () -> [String], storageFolder: URL, logger: Logger) {
        var settings = settings
        if let name = settings.interface {
            if let ip = Self.ipv4(ofInterface: name) {
                settings.address = ip
            } else {
                // Served nowhere rather than everywhere: the user asked for one network only.
                logger.error("UPnP: no interface \(name) with an IPv4 address; the renderer serves on 127.0.0.1 only")
                settings.address = "127.0.0.1"
            }
        }
        self.settings = settings
        self.player = player
        self.storageFolder = storageFolder
        self.logger = logger
        self.mimeTypes = mimeTypes
        let box = Mutex<(@Sendable (String) -> [(String, String)])?>(nil)
        events = EventPublisher(maximum: settings.maximumSubscriptions, logger: logger) { service in
            box.withLock { $0 }?(service) ?? []
        }
        box.withLock { $0 = { [weak self] service in self?.initialProperties(service) ?? [] } }
    }

    /// The description URL once serving, as seen on this machine.
    public var descriptionURL: String? { port.withLock { $0 }.map { "http://\(Self.announcedAddress(settings.address, remote: nil)):\($0)/upnp/description.xml" } }

    /// Starts serving, announcing and following the player; a port that cannot be taken is logged and the daemon
    /// goes on without the renderer.
    public func start() async {
        udn.withLock { $0 = "uuid:" + loadUUID() }
        // Read from GStreamer's registry, which can take seconds while GStreamer is still being set up: on a thread
        // of its own, not one of the concurrency pool's two, and before anything is served.
        let mimeTypes = mimeTypes
        let types = (try? await DispatchQueue.global().run { mimeTypes() }) ?? []
        protocolInfo.withLock {
            $0 = types.filter { $0.hasPrefix("audio/") || $0 == "application/ogg" }.map { "http-get:*:\($0):*" }.joined(separator: ",")
        }
        let ready = AsyncStream<Int>.makeStream()
        let app: any ApplicationProtocol
        do { app = try application { ready.continuation.yield($0); ready.continuation.finish() } } catch {
            logger.error("UPnP: cannot start: \(error)")
            return
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: app, serviceName: "UPnP renderer")], logger: logger))
        let settings = settings, logger = logger
        let server = Task {
            do { try await group.run() } catch {
                logger.error("UPnP: cannot serve on \(settings.address):\(settings.port): \(error)")
            }
            ready.continuation.finish()
        }
        let follower = Task { [weak self] in _ = await self?.follow() }
        // Subscriptions not renewed in time are dropped within a second, playing or not.
        let expiry = Task { [events] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await events.expire()
            }
        }
        running.withLock { $0 = Running(group: group, server: server, follower: follower, expiry: expiry, ssdp: nil) }
        var bound: Int?
        for await p in ready.stream { bound = p }
        guard let bound else { return }
        port.withLock { $0 = bound }
        let messages = SSDPMessages(udn: udn.withLock { $0 }, deviceType: Self.deviceType,
                                    serviceTypes: ServiceDefinition.all.map(\.type), server: Self.serverHeader)
        do {
            let ssdp = try await SSDPServer(messages: messages, location: { [settings] remote in
                "http://\(Self.announcedAddress(settings.address, remote: remote)):\(bound)/upnp/description.xml"
            }, logger: logger)
            ssdp.start()
            running.withLock { $0?.ssdp = ssdp }
            logger.notice("UPnP: \"\(settings.name)\" is a media renderer at \(descriptionURL ?? "")")
        } catch {
            logger.error("UPnP: cannot take the SSDP port \(SSDPMessages.port) (\(error)); controllers can still reach \(descriptionURL ?? "")")
        }
    }

    /// Says byebye, closes the listener and forgets every subscription; what plays goes on playing.
    public func stop() async {
        guard let r = running.withLock({ current in defer { current = nil }; return current }) else { return }
        await r.ssdp?.stop()
        r.follower.cancel()
        r.expiry.cancel()
        await events.removeAll()
        await r.group.triggerGracefulShutdown()
        await r.server.value
    }

    static let serverHeader = "Linux/1.0 UPnP/1.0 Tonearm/1.0"

    func descriptionUDN() -> String { udn.withLock { $0 } }

    // MARK: - State and events

    /// The variables of a player state with this renderer's memory.
    func variables(_ state: PlayerState) -> RendererVariables {
        RendererVariables(state, memory: memory.withLock { $0 })
    }

    /// Follows the player's events; each change that alters an evented variable is sent as a LastChange.
    private func follow() async {
        let subscription = player.events.subscribe(capacity: 64)
        defer { subscription.cancel() }
        evented.withLock { $0 = variables(player.state) }
        for await sequenced in subscription {
            // Ticks move only the position, which is not evented.
            if case .tick = sequenced.event { continue }
            await changed()
        }
    }

    /// Events what changed since the last event (also after the renderer's own changes, such as a mute).
    func changed() async {
        let state = player.state
        memory.withLock { $0.keep(only: state.snapshot.trackIDs) }
        let now = variables(state)
        let old = evented.withLock { old in defer { old = now }; return old } ?? now
        for service in ["AVTransport", "RenderingControl"] {
            await events.publish(service: service, changes: now.changes(service, since: old))
        }
    }

    /// A new subscriber's first event: every evented variable of the service.
    private func initialProperties(_ service: String) -> [(String, String)] {
        if service == "ConnectionManager" {
            return [("SourceProtocolInfo", ""), ("SinkProtocolInfo", sinkProtocolInfo), ("CurrentConnectionIDs", "0")]
        }
        let v = variables(player.state)
        return [("LastChange", RendererVariables.lastChange(service, v.lastChangeVariables(service) ?? [:]))]
    }

    func remember(_ ids: [TrackID], uri: String, metadata: String, next: Bool) {
        guard let first = ids.first else { return }
        memory.withLock { $0.entries[first] = CastMemory.Entry(uri: uri, metadata: metadata, isNext: next) }
    }

    /// Takes out of the queue a "next" cast that has not started, as a new SetNextAVTransportURI replaces it.
    func removePendingNext() {
        let current = player.state.snapshot.current?.id
        let pending = memory.withLock { m in m.entries.filter { $0.value.isNext && $0.key != current }.map(\.key) }
        for id in pending {
            memory.withLock { $0.entries[id] = nil }
            Task { [player] in try? await player.remove(id) }
        }
    }

    /// Remembers the volume to come back to; false when already muted.
    func mute(volume: Double) -> Bool {
        memory.withLock { m in
            guard m.volumeBeforeMute == nil else { return false }
            m.volumeBeforeMute = volume
            return true
        }
    }

    /// Forgets the mute; the volume it held, if it was muted.
    @discardableResult
    func unmute() -> Double? {
        memory.withLock { m in defer { m.volumeBeforeMute = nil }; return m.volumeBeforeMute }
    }

    // MARK: - Identity

    /// The configured UUID, or the one kept in the plugin's folder, or a new one kept there.
    private func loadUUID() -> String {
        if let configured = settings.uuid { return configured }
        let file = storageFolder.appendingPathComponent("uuid")
        if let text = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           UUID(uuidString: text) != nil {
            return text.lowercased()
        }
        let made = UUID().uuidString.lowercased()
        do {
            try FileManager.default.createDirectory(at: storageFolder, withIntermediateDirectories: true)
            try Data((made + "\n").utf8).write(to: file, options: .atomic)
        } catch {
            logger.warning("UPnP: cannot keep the device UUID in \(file.path) (\(error)); controllers will see a new device next time")
        }
        return made
    }

    /// The address to put in a URL for a controller at `remote`: the configured one, else the local interface on the
    /// controller's network, else the first non-loopback one.
    static func announcedAddress(_ configured: String, remote: String?) -> String {
        if configured != "0.0.0.0" { return configured }
        let devices = ((try? System.enumerateDevices()) ?? []).compactMap { d -> (ip: UInt32, mask: UInt32)? in
            guard case .v4(let a)? = d.address, case .v4(let m)? = d.netmask else { return nil }
            return (UInt32(bigEndian: a.address.sin_addr.s_addr), UInt32(bigEndian: m.address.sin_addr.s_addr))
        }
        if let remote, let r = ipv4(remote), let match = devices.first(where: { $0.ip & $0.mask == r & $0.mask }) {
            return text(match.ip)
        }
        if let outside = devices.first(where: { $0.ip >> 24 != 127 }) { return text(outside.ip) }
        return "127.0.0.1"
    }

    /// The IPv4 address of the interface named `name`.
    static func ipv4(ofInterface name: String) -> String? {
        for device in (try? System.enumerateDevices()) ?? [] where device.name == name {
            if case .v4(let a)? = device.address { return text(UInt32(bigEndian: a.address.sin_addr.s_addr)) }
        }
        return nil
    }

    static func ipv4(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".").compactMap { UInt32($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 < 256 }) else { return nil }
        return parts.reduce(0) { $0 << 8 | $1 }
    }

    static func text(_ ip: UInt32) -> String { "\(ip >> 24).\(ip >> 16 & 255).\(ip >> 8 & 255).\(ip & 255)" }
}

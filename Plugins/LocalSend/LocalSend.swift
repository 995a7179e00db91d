import Foundation
import Hummingbird
import Logging
import ReceivedShares
import ServiceLifecycle
import Synchronization
import TonearmCore

/// Tonearm as a LocalSend device: phones and computers running LocalSend see it, send songs to it, and the songs go
/// through the shares acceptance into Received and the on-receive action.
public final class LocalSend: SourcePlugin {
    public let name = "localsend"
    public let settings: LocalSendSettings
    let shares: ReceivedShares
    let logger: Logger
    private let running = Mutex<Running?>(nil)

    struct Running: Sendable {
        var receiver: LocalSendReceiver
        var server: Task<Void, Never>
        var group: ServiceGroup
        var ticker: Task<Void, Never>
        var discovery: LocalSendDiscovery?
        var port: Int
        var fingerprint: String
    }

    /// `shares`: the acceptance every received file goes through.
    public init(settings: LocalSendSettings, shares: ReceivedShares, logger: Logger = Logger(label: "tonearm.localsend")) {
        self.settings = settings
        self.shares = shares
        self.logger = logger
    }

    public func canResolve(_ uri: URL) -> Bool { false }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        throw TonearmError.unsupportedScheme(uri.absoluteString)
    }

    /// The port the server listens on and the certificate fingerprint, once started.
    public var endpoint: (port: Int, fingerprint: String)? {
        running.withLock { $0.map { ($0.port, $0.fingerprint) } }
    }

    /// Makes (or loads) the certificate, starts the server and announces the device; does nothing when disabled.
    public func start(_ context: PluginContext) async throws {
        guard settings.enabled else { return }
        let identity = try LocalSendIdentity.loadOrCreate(in: context.storageFolder.appendingPathComponent("identity"), alias: settings.alias)
        let pairedFile = context.storageFolder.appendingPathComponent("paired.txt")
        let paired = Set(((try? String(contentsOf: pairedFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
        let storedFile = context.storageFolder.appendingPathComponent("stored.txt")
        let stored = Self.readStored(storedFile)
        let shares = shares, logger = logger
        let receiver = LocalSendReceiver(
            machine: LocalSendMachine(policy: settings.policy, paired: paired),
            staging: context.storageFolder.appendingPathComponent("staging"), logger: logger, stored: stored,
            deliver: { staged in
                await shares.take(staged: staged.path, name: staged.name, from: Self.sender(staged.sender))?.path
            },
            report: { event in
                switch event {
                case .offered(let offer): shares.offerEvent(.offered(Self.offer(offer)))
                case .offerClosed(let id): shares.offerEvent(.offerClosed(id: id))
                case .refused(let peer, let name, let reason): shares.refusedFromDevice(name, from: Self.sender(peer), reason: reason)
                case .paired(let peer):
                    Self.remember(peer.fingerprint, in: pairedFile, logger: logger)
                case .alreadyStored(let peer, let name, let path):
                    shares.alreadyStored(name, from: Self.sender(peer), at: path)
                case .stored(let sha, let path):
                    Self.remember("\(sha) \(path)", in: storedFile, logger: logger)
                }
            })
        shares.addOfferSource(Offers(receiver: receiver))
        let info = LocalSendMessages.DeviceInfo(alias: settings.alias, version: "2.1", deviceModel: "Tonearm", deviceType: "desktop",
                                                fingerprint: identity.fingerprint,
                                                port: settings.port, protocol: settings.https ? "https" : "http", download: false)
        let server = LocalSendServer(receiver: receiver, settings: settings, identity: identity, info: info, logger: logger) { peer, address in
            logger.info("\(peer.alias) (\(address)) registered")
        }
        let (bound, bind) = AsyncStream.makeStream(of: Int?.self)
        let app = try server.application { port in bind.yield(port) }
        // In a group of its own, so stopping is Hummingbird's graceful shutdown (listener closed, requests finished).
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: app, serviceName: "LocalSend server")], logger: logger))
        let serverTask = Task {
            do { try await group.run() } catch { logger.error("LocalSend server: \(error)") }
            bind.yield(nil)
        }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next() ?? nil else {
            throw TonearmError(.localSendFailed, "cannot listen on \(settings.address):\(settings.port) for LocalSend")
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await receiver.tick()
            }
        }
        var announced = info
        announced.port = port
        var discovery: LocalSendDiscovery?
        if settings.discovery {
            do {
                discovery = try await LocalSendDiscovery(settings: settings, info: announced, identity: identity, logger: logger)
            } catch {
                logger.error("LocalSend discovery is off: cannot join \(settings.multicastGroup):53317: \(error)")
            }
        }
        running.withLock { $0 = Running(receiver: receiver, server: serverTask, group: group, ticker: ticker, discovery: discovery, port: port,
                                        fingerprint: identity.fingerprint) }
        logger.info("LocalSend: \"\(settings.alias)\" on port \(port) (\(settings.https ? "https" : "http")), accepting: \(settings.policy.mode.rawValue), fingerprint \(identity.fingerprint)")
        if let discovery { Task { await discovery.announce() } }
    }

    public func stop() async {
        guard let r = running.withLock({ current in defer { current = nil }; return current }) else { return }
        await r.discovery?.stop()
        r.ticker.cancel()
        // Held offers answered and uploads closed first: the graceful shutdown then has nothing to wait for.
        await r.receiver.shutdown()
        await r.group.triggerGracefulShutdown()
        await r.server.value
    }

    static func sender(_ peer: LocalSendMachine.Peer) -> ShareSender {
        ShareSender(name: peer.alias, address: peer.address, fingerprint: peer.fingerprint)
    }

    static func offer(_ offer: LocalSendMachine.Offer) -> ShareOffer {
        ShareOffer(id: offer.id, sender: sender(offer.peer), files: offer.files.map { ($0.name, $0.offered.size) })
    }

    /// The SHA-256 → path list of files received before ("SHA PATH" lines).
    static func readStored(_ file: URL) -> [String: String] {
        var map: [String: String] = [:]
        for line in ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            map[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return map
    }

    /// Adds a line (a paired fingerprint, a stored file) to a list file, once.
    static func remember(_ fingerprint: String, in file: URL, logger: Logger) {
        var lines = ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        guard !lines.contains(fingerprint) else { return }
        lines.append(fingerprint)
        do {
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        } catch {
            logger.error("cannot remember the paired device \(fingerprint): \(error)")
        }
    }
}

/// The receiver's offers, as the shares plugin lists and answers them.
struct Offers: ShareOfferSource {
    let receiver: LocalSendReceiver

    func pendingOffers() async -> [ShareOffer] {
        await receiver.pendingOffers.map(LocalSend.offer)
    }

    func answerOffer(_ id: String, accept: Bool) async -> Bool {
        await receiver.answer(id, accept: accept)
    }
}

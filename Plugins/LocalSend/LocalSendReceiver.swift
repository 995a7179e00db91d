import Foundation
import Glibc
import Logging
import NIOCore

/// A file fully received into staging, ready for the shares pipeline.
public struct StagedFile: Sendable {
    public var path: String
    /// The safe base name to store it under.
    public var name: String
    public var sender: LocalSendMachine.Peer
}

/// What the receiver tells the rest of the daemon.
public enum LocalSendEvent: Sendable, Equatable {
    /// An offer waits for the user (ask mode).
    case offered(LocalSendMachine.Offer)
    /// An offer was answered, cancelled or timed out.
    case offerClosed(id: String)
    /// A sender's file was refused before the pipeline: its name and why.
    case refused(sender: LocalSendMachine.Peer, fileName: String, reason: String)
    /// A sender offered a file the library holds already (at `path`); it is not sent again.
    case alreadyStored(sender: LocalSendMachine.Peer, fileName: String, path: String)
    /// A file with this SHA-256 is now in the library at `path` (to remember across restarts).
    case stored(sha256: String, path: String)
    /// The user accepted this certificate (it is now paired).
    case paired(LocalSendMachine.Peer)
}

/// Runs the protocol machine and carries out its actions: held prepare-upload answers, staging files, closing
/// the connections of a session that ended, and handing complete files over.
public actor LocalSendReceiver {
    private var machine: LocalSendMachine
    private let staging: URL
    private let logger: Logger
    /// Hands a staged file to the library; returns where it is stored, or nil when it was refused.
    private let deliver: @Sendable (StagedFile) async -> String?
    /// SHA-256 → path of files received before (checked for existence before each prepare-upload).
    private var storedFiles: [String: String]
    private let report: @Sendable (LocalSendEvent) -> Void
    private var held: [String: CheckedContinuation<LocalSendMachine.Reply, Never>] = [:]
    /// The connection each held prepare-upload came on, watched so that an offer ends when its sender leaves.
    private var heldConnections: [String: any Channel] = [:]
    /// The connections carrying a session's uploads, closed when the session ends under them.
    private var connections: [String: [ObjectIdentifier: any Channel]] = [:]
    /// The last delivery started: each waits for the one before, so files reach the library in hand-over order.
    private var lastDelivery: Task<Void, Never>?
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// Starts empty: whatever an earlier run left in `staging` is removed.
    public init(machine: LocalSendMachine, staging: URL, logger: Logger, stored: [String: String] = [:],
                deliver: @escaping @Sendable (StagedFile) async -> String?, report: @escaping @Sendable (LocalSendEvent) -> Void) {
        self.machine = machine
        storedFiles = stored
        self.staging = staging
        self.logger = logger
        self.deliver = deliver
        self.report = report
        origin = clock.now
        try? FileManager.default.removeItem(at: staging)
    }

    private var now: Double {
        let d = clock.now - origin
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// The fingerprints of certificates the user accepted.
    public var paired: Set<String> { machine.paired }

    /// Offers waiting for the user.
    public var pendingOffers: [LocalSendMachine.Offer] { machine.pendingOffers }

    /// prepare-upload: answers at once, or (ask mode) when the user has answered or the sender has left.
    public func prepare(peer: LocalSendMachine.Peer, files: [LocalSendMachine.OfferedFile], pin: String?,
                        channel: any Channel) async -> LocalSendMachine.Reply {
        storedFiles = storedFiles.filter { FileManager.default.fileExists(atPath: $0.value) }
        machine.stored = Set(storedFiles.keys)
        let actions = machine.handle(.prepare(peer: peer, files: files, pin: pin, now: now))
        if let reply = perform(actions) { return reply }
        guard case .ask(let offer)? = actions.last else { return .error(500, "no answer") }
        heldConnections[offer.id] = channel
        return await withCheckedContinuation { held[offer.id] = $0 }
    }

    /// The user's answer to an offer; false when there is no such offer waiting.
    public func answer(_ offer: String, accept: Bool) -> Bool {
        guard machine.pendingOffers.contains(where: { $0.id == offer }) else { return false }
        _ = perform(machine.handle(.answer(offer: offer, accept: accept, now: now)))
        return true
    }

    /// What an upload request gets: a staging file to write, or an answer.
    public enum UploadStart: Sendable {
        case receive(LocalSendMachine.AcceptedFile, path: String)
        case reply(LocalSendMachine.Reply)
    }

    public func beginUpload(session: String, file: String, token: String, address: String, channel: any Channel) -> UploadStart {
        let actions = machine.handle(.uploadBegins(session: session, file: file, token: token, address: address, now: now))
        guard case .receive(_, let accepted)? = actions.first else { return .reply(perform(actions) ?? .error(500, "no answer")) }
        let folder = staging.appendingPathComponent(session)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        connections[session, default: [:]][ObjectIdentifier(channel)] = channel
        // The token is ours and random: the sender's file id never reaches a path.
        return .receive(accepted, path: folder.appendingPathComponent(accepted.token + ".part").path)
    }

    public func progress(session: String) {
        _ = machine.handle(.progress(session: session, now: now))
    }

    public func endUpload(session: String, file: String, result: LocalSendMachine.UploadResult, channel: any Channel) -> LocalSendMachine.Reply {
        connections[session]?[ObjectIdentifier(channel)] = nil
        return perform(machine.handle(.uploadEnds(session: session, file: file, result: result, now: now))) ?? .ok
    }

    public func cancel(session: String, address: String) -> LocalSendMachine.Reply {
        perform(machine.handle(.cancel(session: session, address: address, now: now))) ?? .ok
    }

    /// Checks the clock (stalled sessions, unanswered offers, PIN lockouts) and whether held offers' senders are
    /// still there. Called every second.
    public func tick() async {
        for (offer, channel) in heldConnections {
            guard await Self.peerHasLeft(channel) else { continue }
            logger.info("the sender of offer \(offer) left before the user answered")
            _ = perform(machine.handle(.senderLeft(offer: offer)))
        }
        _ = perform(machine.handle(.tick(now: now)))
    }

    /// Whether the other end closed the connection. NIO does not read a connection while its request is being
    /// answered, so a held request never sees the sender's close; the kernel's TCP state does (CLOSE_WAIT after
    /// the sender's FIN, CLOSE after a reset). A sender that vanishes without either stays until ask-seconds.
    static func peerHasLeft(_ channel: any Channel) async -> Bool {
        guard channel.isActive else { return true }
        guard let socket = channel as? any SocketOptionProvider, let info = try? await socket.getTCPInfo().get() else { return false }
        return info.tcpi_state != 1  // TCP_ESTABLISHED
    }

    /// Ends everything (the daemon stops): held offers are refused, uploads closed.
    public func shutdown() {
        for (id, continuation) in held { continuation.resume(returning: .error(500, "the player is stopping")); report(.offerClosed(id: id)) }
        held = [:]
        heldConnections = [:]
        for channels in connections.values { for channel in channels.values { channel.close(promise: nil) } }
        connections = [:]
        try? FileManager.default.removeItem(at: staging)
    }

    private func noteStored(_ sha: String, _ path: String) {
        storedFiles[sha] = path
        report(.stored(sha256: sha, path: path))
    }

    /// Carries out the actions; returns the answer for the request that brought them, if there is one.
    private func perform(_ actions: [LocalSendMachine.Action]) -> LocalSendMachine.Reply? {
        var reply: LocalSendMachine.Reply?
        for action in actions {
            switch action {
            case .reply(let r):
                reply = r
            case .ask(let offer):
                logger.info("\(offer.peer.alias) (\(offer.peer.address)) offers \(offer.files.count) file(s): waiting for the user")
                report(.offered(offer))
            case .answerHeld(let offer, let r):
                heldConnections[offer] = nil
                held.removeValue(forKey: offer)?.resume(returning: r)
                report(.offerClosed(id: offer))
            case .receive:
                break
            case .handOver(let session, let file, let peer):
                let path = staging.appendingPathComponent(session).appendingPathComponent(file.token + ".part").path
                // Out of the staging folder at once, so ending the session cannot remove it.
                let ready = staging.appendingPathComponent("ready-" + file.token).path
                guard rename(path, ready) == 0 else {
                    logger.error("cannot take \(path) out of staging: \(String(cString: strerror(errno)))")
                    continue
                }
                let staged = StagedFile(path: ready, name: file.name, sender: peer)
                let deliver = deliver, previous = lastDelivery
                lastDelivery = Task {
                    await previous?.value
                    // The announced SHA-256 was checked on the way in: it names the stored bytes.
                    if let path = await deliver(staged), let sha = file.offered.sha256 { self.noteStored(sha, path) }
                }
            case .discard:
                break  // the upload's handler removes its own staging file once the answer is known
            case .endSession(let id, let reason):
                logger.info("session \(id) ended: \(reason)")
                for channel in connections.removeValue(forKey: id)?.values ?? [:].values { channel.close(promise: nil) }
                try? FileManager.default.removeItem(at: staging.appendingPathComponent(id))
            case .refused(let peer, let name, let reason):
                logger.warning("refused \(name) from \(peer.alias) (\(peer.address)): \(reason)")
                report(.refused(sender: peer, fileName: name, reason: reason))
            case .pair(let peer):
                report(.paired(peer))
            case .alreadyStored(let peer, let name, let sha):
                logger.info("\(name) from \(peer.alias) is in the library already: not sent again")
                report(.alreadyStored(sender: peer, fileName: name, path: storedFiles[sha] ?? ""))
            }
        }
        return reply
    }
}

/// The LocalSend receiver's protocol state as a value: events (requests, the user's answer, upload ends, clock
/// ticks) go in, actions (the HTTP answer, files to hand over or throw away, sessions to end) come out. It owns the
/// one session, its tokens, the PIN attempts per address and the limits; it does no I/O, so every rule is tested
/// by table.
public struct LocalSendMachine: Sendable {
    /// How senders are let in.
    public enum AcceptMode: String, Sendable, CaseIterable {
        /// Every offer waits for the user (`tonearm shares accept|decline`).
        case ask
        /// Senders who give the configured PIN are let in.
        case pin
        /// Only devices whose certificate the user accepted before.
        case paired
        /// Everyone (on a network the user trusts).
        case open
    }

    /// The rules the machine enforces.
    public struct Policy: Sendable, Equatable {
        public var mode: AcceptMode
        /// Required from every sender when set (in any mode).
        public var pin: String?
        public var maxFileBytes: Int64
        public var maxSessionBytes: Int64
        public var maxFiles: Int
        /// Seconds without a byte before a session is dropped.
        public var stallSeconds: Double
        /// Seconds an offer waits for the user's answer.
        public var askSeconds: Double
        /// Wrong PINs from one address before it is locked out.
        public var pinAttempts: Int
        public var pinLockoutSeconds: Double

        public init(mode: AcceptMode = .ask, pin: String? = nil, maxFileBytes: Int64 = 2 << 30, maxSessionBytes: Int64 = 8 << 30,
                    maxFiles: Int = 500, stallSeconds: Double = 30, askSeconds: Double = 120, pinAttempts: Int = 3,
                    pinLockoutSeconds: Double = 60) {
            self.mode = mode
            self.pin = pin
            self.maxFileBytes = maxFileBytes
            self.maxSessionBytes = maxSessionBytes
            self.maxFiles = maxFiles
            self.stallSeconds = stallSeconds
            self.askSeconds = askSeconds
            self.pinAttempts = pinAttempts
            self.pinLockoutSeconds = pinLockoutSeconds
        }
    }

    /// Who is sending: the address the request came from, and the identity from its certificate when it sent one
    /// (`verified`), otherwise the one its JSON claims.
    public struct Peer: Sendable, Equatable {
        public var address: String
        public var alias: String
        public var fingerprint: String
        public var verified: Bool
        public var deviceModel: String?
        public var deviceType: String?

        public init(address: String, alias: String, fingerprint: String, verified: Bool, deviceModel: String? = nil, deviceType: String? = nil) {
            self.address = address
            self.alias = alias
            self.fingerprint = fingerprint
            self.verified = verified
            self.deviceModel = deviceModel
            self.deviceType = deviceType
        }
    }

    /// A file as prepare-upload announces it.
    public struct OfferedFile: Sendable, Equatable {
        public var id: String
        public var fileName: String
        public var size: Int64
        public var fileType: String
        public var sha256: String?

        public init(id: String, fileName: String, size: Int64, fileType: String, sha256: String? = nil) {
            self.id = id
            self.fileName = fileName
            self.size = size
            self.fileType = fileType
            self.sha256 = sha256
        }
    }

    /// A file let into the session: its token and the safe base name it is stored under.
    public struct AcceptedFile: Sendable, Equatable {
        public var offered: OfferedFile
        public var token: String
        public var name: String
    }

    /// An offer waiting for the user.
    public struct Offer: Sendable, Equatable {
        public var id: String
        public var peer: Peer
        public var files: [AcceptedFile]
    }

    /// How one upload ended, as the server measured it.
    public enum UploadResult: Sendable, Equatable {
        /// Exactly the announced size, and the announced SHA-256 if there was one.
        case complete
        /// More bytes came than announced (the server stopped reading).
        case tooLong
        /// The body ended short of the announced size.
        case tooShort(received: Int64)
        case checksumMismatch
        /// The connection broke or the disk failed.
        case failed(String)
    }

    public enum Event: Sendable, Equatable {
        case prepare(peer: Peer, files: [OfferedFile], pin: String?, now: Double)
        /// The user's answer to an offer (ask mode).
        case answer(offer: String, accept: Bool, now: Double)
        case uploadBegins(session: String, file: String, token: String, address: String, now: Double)
        /// Bytes of an upload arrived.
        case progress(session: String, now: Double)
        case uploadEnds(session: String, file: String, result: UploadResult, now: Double)
        case cancel(session: String, address: String, now: Double)
        /// The connection holding an offer's prepare-upload closed: the sender gave up waiting for the user.
        case senderLeft(offer: String)
        case tick(now: Double)
    }

    /// An HTTP answer: status and either the prepare-upload body or an error message.
    public struct Reply: Sendable, Equatable {
        public var status: Int
        public var message: String?
        public var session: String?
        public var tokens: [String: String]

        public init(status: Int, message: String?, session: String?, tokens: [String: String]) {
            self.status = status
            self.message = message
            self.session = session
            self.tokens = tokens
        }

        /// An error answer with its JSON message.
        public static func error(_ status: Int, _ message: String) -> Reply { Reply(status: status, message: message, session: nil, tokens: [:]) }
        /// 200 with no body.
        public static let ok = Reply(status: 200, message: nil, session: nil, tokens: [:])
        static func prepared(_ session: Session) -> Reply {
            Reply(status: 200, message: nil, session: session.id,
                  tokens: Dictionary(uniqueKeysWithValues: session.files.values.map { ($0.accepted.offered.id, $0.accepted.token) }))
        }
    }

    public enum Action: Sendable, Equatable {
        /// Answer the request that brought the event.
        case reply(Reply)
        /// Hold the prepare-upload request and ask the user about this offer.
        case ask(Offer)
        /// Answer the prepare-upload held for this offer.
        case answerHeld(offer: String, Reply)
        /// Stream the upload's body into the staging file.
        case receive(session: String, file: AcceptedFile)
        /// The staged file is complete: hand it to the shares pipeline.
        case handOver(session: String, file: AcceptedFile, peer: Peer)
        /// Throw the staged file away.
        case discard(session: String, file: String)
        /// Stop what still runs for the session and remove its staging folder.
        case endSession(String, reason: String)
        /// A file of this sender was refused before it reached the pipeline.
        case refused(peer: Peer, fileName: String, reason: String)
        /// Remember this certificate as one the user accepted.
        case pair(Peer)
        /// A file the library already holds (by its announced SHA-256): not sent again.
        case alreadyStored(peer: Peer, fileName: String, sha256: String)
    }

    struct FileState: Sendable, Equatable {
        /// `received`: complete and staged, held until every file offered before it is done (so the songs reach
        /// the queue in the order the sender listed them).
        enum Phase: Sendable, Equatable { case waiting, receiving, received, done }
        var accepted: AcceptedFile
        var phase: Phase
    }

    struct Session: Sendable, Equatable {
        var id: String
        var peer: Peer
        var files: [String: FileState]
        var asking: Bool
        var lastActivity: Double
        /// Files in the order they were offered.
        var order: [String]
    }

    struct PinRecord: Sendable, Equatable {
        var failures = 0
        var lockedUntil: Double?
    }

    public var policy: Policy
    /// Fingerprints of certificates the user accepted before.
    public var paired: Set<String>
    /// SHA-256s (lower-case hex) of files already stored in the library: offered again, they are not sent.
    public var stored: Set<String> = []
    private(set) var session: Session?
    private(set) var pins: [String: PinRecord] = [:]
    private let makeID: @Sendable () -> String

    /// `makeID` gives session ids and tokens (random by default; tests pass a counter).
    public init(policy: Policy, paired: Set<String> = [], makeID: @escaping @Sendable () -> String = LocalSendMachine.randomID) {
        self.policy = policy
        self.paired = paired
        self.makeID = makeID
    }

    /// 128 random bits as hex.
    public static let randomID: @Sendable () -> String = {
        (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16).leftPadded(8) }.joined()
    }

    /// The session now running or waiting for the user, if any.
    public var activeSession: String? { session?.id }

    /// Offers waiting for the user.
    public var pendingOffers: [Offer] {
        guard let session, session.asking else { return [] }
        return [Offer(id: session.id, peer: session.peer, files: session.order.compactMap { session.files[$0]?.accepted })]
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case let .prepare(peer, files, pin, now): return prepare(peer, files, pin: pin, now: now)
        case let .answer(offer, accept, now): return answer(offer, accept: accept, now: now)
        case let .uploadBegins(id, file, token, address, now): return uploadBegins(id, file: file, token: token, address: address, now: now)
        case let .progress(id, now):
            if session?.id == id { session?.lastActivity = now }
            return []
        case let .uploadEnds(id, file, result, now): return uploadEnds(id, file: file, result: result, now: now)
        case let .cancel(id, address, now): return cancel(id, address: address, now: now)
        case let .senderLeft(offer): return senderLeft(offer)
        case let .tick(now): return tick(now)
        }
    }

    // MARK: prepare-upload

    private mutating func prepare(_ peer: Peer, _ files: [OfferedFile], pin: String?, now: Double) -> [Action] {
        if let until = pins[peer.address]?.lockedUntil {
            if now < until { return [.reply(.error(429, "too many wrong PINs: try again in \(Int((until - now).rounded(.up))) s"))] }
            pins[peer.address] = nil
        }
        if session != nil { return [.reply(.error(409, "blocked by another session"))] }
        if let required = policy.pin {
            guard let pin, !pin.isEmpty else { return [.reply(.error(401, "PIN required"))] }
            guard pin == required else {
                var record = pins[peer.address] ?? PinRecord()
                record.failures += 1
                if record.failures >= policy.pinAttempts { record.lockedUntil = now + policy.pinLockoutSeconds }
                pins[peer.address] = record
                return [.reply(.error(401, "invalid PIN"))]
            }
            pins[peer.address] = nil
        }
        guard !files.isEmpty else { return [.reply(.error(400, "invalid body: no files"))] }
        if policy.mode == .paired, !(peer.verified && paired.contains(peer.fingerprint)) {
            return [.reply(.error(403, peer.verified ? "rejected: this device is not paired (accept it once in ask mode)"
                                                    : "rejected: paired mode needs the sender's certificate"))]
        }
        var actions: [Action] = []
        var accepted: [FileState] = []
        var total: Int64 = 0
        var seen = Set<String>()
        var skipped = 0
        for file in files {
            let name = LocalSendNames.safeBaseName(file.fileName)
            if let sha = file.sha256, stored.contains(sha), LocalSendNames.notAudio(name: name, type: file.fileType) == nil {
                skipped += 1
                actions.append(.alreadyStored(peer: peer, fileName: name, sha256: sha))
                continue
            }
            let reason: String?
            if file.id.isEmpty || !seen.insert(file.id).inserted {
                reason = "a missing or repeated file id"
            } else if let why = LocalSendNames.notAudio(name: name, type: file.fileType) {
                reason = why
            } else if file.size <= 0 {
                reason = "it is empty"
            } else if file.size > policy.maxFileBytes {
                reason = "it is \(file.size) bytes, over the limit of \(policy.maxFileBytes)"
            } else if accepted.count >= policy.maxFiles {
                reason = "more than \(policy.maxFiles) files in one transfer"
            } else if total + file.size > policy.maxSessionBytes {
                reason = "the transfer would be over the limit of \(policy.maxSessionBytes) bytes"
            } else {
                reason = nil
            }
            if let reason {
                actions.append(.refused(peer: peer, fileName: name, reason: reason))
                continue
            }
            total += file.size
            accepted.append(FileState(accepted: AcceptedFile(offered: file, token: makeID(), name: name), phase: .waiting))
        }
        guard !accepted.isEmpty else {
            // Spec 204: finished, no file transfer needed.
            if skipped > 0 { return actions + [.reply(Reply(status: 204, message: nil, session: nil, tokens: [:]))] }
            let reasons = actions.compactMap { if case let .refused(_, name, why) = $0 { "\(name): \(why)" } else { nil } }
            return actions + [.reply(.error(403, "rejected: nothing this player takes (\(reasons.joined(separator: "; ")))"))]
        }
        let new = Session(id: makeID(), peer: peer, files: Dictionary(uniqueKeysWithValues: accepted.map { ($0.accepted.offered.id, $0) }),
                          asking: policy.mode == .ask, lastActivity: now, order: accepted.map(\.accepted.offered.id))
        session = new
        if new.asking {
            return actions + [.ask(pendingOffers[0])]
        }
        return actions + [.reply(.prepared(new))]
    }

    private mutating func answer(_ offer: String, accept: Bool, now: Double) -> [Action] {
        guard let current = session, current.id == offer, current.asking else { return [] }
        if accept {
            session?.asking = false
            session?.lastActivity = now
            var actions: [Action] = [.answerHeld(offer: offer, .prepared(current))]
            if current.peer.verified, paired.insert(current.peer.fingerprint).inserted { actions.append(.pair(current.peer)) }
            return actions
        }
        session = nil
        return [.answerHeld(offer: offer, .error(403, "rejected: declined by the user")), .endSession(offer, reason: "declined")]
    }

    // MARK: upload

    private mutating func uploadBegins(_ id: String, file: String, token: String, address: String, now: Double) -> [Action] {
        guard !id.isEmpty, !file.isEmpty, !token.isEmpty else { return [.reply(.error(400, "missing parameters"))] }
        guard let current = session else { return [.reply(.error(409, "no session is open"))] }
        guard current.id == id else { return [.reply(.error(409, "blocked by another session"))] }
        guard current.peer.address == address else { return [.reply(.error(403, "invalid IP address"))] }
        guard !current.asking else { return [.reply(.error(409, "the session is still waiting for the user"))] }
        guard let state = current.files[file], state.accepted.token == token else { return [.reply(.error(403, "invalid token"))] }
        guard state.phase == .waiting else { return [.reply(.error(409, "this file is already being received"))] }
        session?.files[file]?.phase = .receiving
        session?.lastActivity = now
        return [.receive(session: id, file: state.accepted)]
    }

    private mutating func uploadEnds(_ id: String, file: String, result: UploadResult, now: Double) -> [Action] {
        guard let current = session, current.id == id, let state = current.files[file], state.phase == .receiving else {
            // The session ended under the upload (cancelled, stalled): its staging is already gone.
            return [.discard(session: id, file: file), .reply(.error(409, "the session has ended"))]
        }
        session?.lastActivity = now
        session?.files[file]?.phase = result == .complete ? .received : .done
        var actions: [Action]
        switch result {
        case .complete:
            actions = [.reply(.ok)]
        case .tooLong:
            actions = refuse(id, state, current.peer, "more bytes came than the \(state.accepted.offered.size) announced", 400)
        case .tooShort(let received):
            actions = refuse(id, state, current.peer, "only \(received) of the \(state.accepted.offered.size) bytes announced came", 400)
        case .checksumMismatch:
            actions = refuse(id, state, current.peer, "its SHA-256 is not the one announced", 422)
        case .failed(let why):
            actions = refuse(id, state, current.peer, "the upload failed: \(why)", 500)
        }
        actions = releaseInOrder(stoppingAtGaps: true) + actions
        if session?.files.values.allSatisfy({ $0.phase == .done }) == true {
            session = nil
            actions.append(.endSession(id, reason: "finished"))
        }
        return actions
    }

    /// Hands over the received files in the order they were offered: up to the first one still to come, or (the
    /// session ending) all of them.
    private mutating func releaseInOrder(stoppingAtGaps: Bool) -> [Action] {
        guard let current = session else { return [] }
        var actions: [Action] = []
        for id in current.order {
            guard let state = current.files[id] else { continue }
            switch state.phase {
            case .done: continue
            case .received:
                session?.files[id]?.phase = .done
                actions.append(.handOver(session: current.id, file: state.accepted, peer: current.peer))
            case .waiting, .receiving:
                if stoppingAtGaps { return actions }
            }
        }
        return actions
    }

    private func refuse(_ id: String, _ state: FileState, _ peer: Peer, _ reason: String, _ status: Int) -> [Action] {
        [.discard(session: id, file: state.accepted.offered.id), .refused(peer: peer, fileName: state.accepted.name, reason: reason),
         .reply(.error(status, reason))]
    }

    private mutating func cancel(_ id: String, address: String, now: Double) -> [Action] {
        guard let current = session, current.id == id else { return [.reply(.ok)] }
        guard current.peer.address == address else { return [.reply(.error(403, "invalid IP address"))] }
        // What came whole before the cancel is kept.
        var actions = releaseInOrder(stoppingAtGaps: false)
        session = nil
        if current.asking { actions.append(.answerHeld(offer: id, .error(403, "rejected: the sender cancelled"))) }
        return actions + [.endSession(id, reason: "cancelled by the sender"), .reply(.ok)]
    }

    private mutating func senderLeft(_ offer: String) -> [Action] {
        guard let current = session, current.id == offer, current.asking else { return [] }
        session = nil
        return [.answerHeld(offer: offer, .error(403, "rejected: the sender left")), .endSession(offer, reason: "the sender left")]
    }

    private mutating func tick(_ now: Double) -> [Action] {
        for (address, record) in pins where record.lockedUntil.map({ now >= $0 }) == true { pins[address] = nil }
        guard let current = session else { return [] }
        if current.asking, now - current.lastActivity >= policy.askSeconds {
            session = nil
            return [.answerHeld(offer: current.id, .error(403, "rejected: nobody answered")), .endSession(current.id, reason: "not answered")]
        }
        if !current.asking, now - current.lastActivity >= policy.stallSeconds {
            let kept = releaseInOrder(stoppingAtGaps: false)
            session = nil
            let unfinished = current.order.compactMap { current.files[$0] }.filter { $0.phase == .waiting || $0.phase == .receiving }
            return kept + unfinished.map { .refused(peer: current.peer, fileName: $0.accepted.name, reason: "the sender stalled") }
                + [.endSession(current.id, reason: "stalled")]
        }
        return []
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

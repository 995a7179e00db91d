import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization
import TonearmCore

/// The web face: a JSON API, a WebSocket of live events and the page, over the same Player, queue, library and
/// plugins as MPRIS and the MPD face. Reads answer from the published state; events follow the one fan-out.
public final class WebFace: Sendable {
    let settings: WebSettings
    let player: Player
    let library: (any LibraryAPI)?
    let shares: (any SharesAPI)?
    let playlists: (any PlaylistsAPI)?
    let waveforms: WaveformService?
    /// Cover art the library and shares extracted lives here; only files in it are served by name.
    let artFolderPath: String
    let logger: Logger
    let access: WebAccess
    /// The state's text, kept from one read to the next while the state stands.
    let stateText = StateText()
    private let bound = Mutex<Int?>(nil)
    /// The last event frame written, for the next client following the same event.
    let sharedFrames = Mutex<(sequence: UInt64, frame: ByteBuffer)?>(nil)
    /// The largest request body taken.
    static let maximumBody = 64 << 10
    /// How long a connection may stay silent, or take to send a request's header.
    static let idleTimeout: TimeAmount = .seconds(30)

    public init(settings: WebSettings, player: Player, library: (any LibraryAPI)?, shares: (any SharesAPI)?,
                playlists: (any PlaylistsAPI)?, waveforms: WaveformService?, artFolder: URL, logger: Logger) {
        self.settings = settings
        self.player = player
        self.library = library
        self.shares = shares
        self.playlists = playlists
        self.waveforms = waveforms
        artFolderPath = artFolder.standardizedFileURL.path
        self.logger = logger
        access = WebAccess(settings: settings)
    }

    /// The address to open in a browser, once listening.
    public var address: String? { bound.withLock { $0 }.map { settings.url(port: $0) } }

    private struct Running {
        var group: ServiceGroup
        var task: Task<Void, Never>
    }
    private let running = Mutex<Running?>(nil)

    /// Starts serving; a port that cannot be taken is logged and the daemon goes on without the face.
    public func start() {
        let app: any Service
        do { app = try application() } catch {
            logger.error("web face: cannot start: \(error)")
            return
        }
        // In a group of its own, so stopping is Hummingbird's graceful shutdown (listener closed, requests finished).
        // Named: left unnamed, the group names it by interpolating it, and reflection printed the whole server (router,
        // event loop) at every start, at about 10 ms of CPU in conformance look-ups through the large executable.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: app, serviceName: "web face")], logger: logger))
        let settings = settings, logger = logger
        let task = Task {
            do { try await group.run() } catch {
                logger.error("web face: cannot serve on \(settings.address):\(settings.port): \(error)")
            }
        }
        running.withLock { $0 = Running(group: group, task: task) }
    }

    /// Closes the listener and every WebSocket, and waits for the requests under way.
    public func stop() async {
        guard let r = running.withLock({ current in defer { current = nil }; return current }) else { return }
        await r.group.triggerGracefulShutdown()
        await r.task.value
    }

    /// The HTTP routes and the WebSocket's, each behind the guard.
    func routers() -> (Router<BasicRequestContext>, Router<SocketRequestContext>) {
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(RequestGuard(access: access))
        addPage(to: router)
        addPlayerRoutes(to: router)
        addQueueRoutes(to: router)
        addLibraryRoutes(to: router)
        addMediaRoutes(to: router)
        let sockets = Router(context: SocketRequestContext.self)
        sockets.middlewares.add(RequestGuard(access: access))
        addEventSocket(to: sockets)
        return (router, sockets)
    }

    /// Every route served, as "METHOD /path" with parameters as `{name}` (as the OpenAPI document writes them).
    public func routes() -> [String] {
        let (router, sockets) = routers()
        let all = router.routes.map { ($0.method.rawValue, $0.path.description) } + sockets.routes.map { ($0.method.rawValue, $0.path.description) }
        return all.map { method, path in
            let named = path.split(separator: "/", omittingEmptySubsequences: false).map { part in
                part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
            }.joined(separator: "/")
            return "\(method) \(named.hasPrefix("/") ? named : "/" + named)"
        }.sorted()
    }

    func application() throws -> some Service {
        let (router, sockets) = routers()
        // A client that opens a connection and sends nothing, or a header a byte at a time (slowloris), is dropped.
        let quick = quickReadAnswer()
        let idle = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(additionalChannelHandlers: [QuickReads(answer: quick)],
                                                                           idleTimeout: Self.idleTimeout))
        let socketResponder = sockets.buildResponder()
        var configuredTLS: TLSConfiguration?
        if let certificate = settings.certificate, let key = settings.key {
            configuredTLS = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        }
        let tls = configuredTLS
        let server = HTTPServerBuilder { responder in
            let http = HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: socketResponder, configuration: idle)
            if let tls { return try TLSChannel(HeaderDeadlineChannel(base: http, timeout: Self.idleTimeout), tlsConfiguration: tls) }
            return HeaderDeadlineChannel(base: http, timeout: Self.idleTimeout)
        }
        let settings = settings, logger = logger
        return WebServer(responder: HeadAsGet(base: router.buildResponder()), server: server,
                         address: .hostname(settings.address, port: settings.port),
                         // One loop accepts and serves every connection: a new connection is then answered with one
                         // thread woken, not two (the listener's loop and the connection's).
                         eventLoopGroup: MultiThreadedEventLoopGroup.singleton.next(),
                         logger: logger,
                         onServerRunning: { channel in
                             let port = channel.localAddress?.port ?? settings.port
                             self.bound.withLock { $0 = port }
                             logger.info("web face: open \(settings.url(port: port)) in a browser")
                         })
    }

    /// What `QuickReads` answers on the event loop: the state, to a request the guard lets through.
    func quickReadAnswer() -> QuickReads.Answer {
        let access = access, player = player, stateText = stateText
        return { request in
            guard request.method == .get, WebAccess.path(request) == "/api/v1/state", access.check(request) == nil else { return nil }
            return stateText.buffer(of: player.state)
        }
    }

    private func addPage(to router: Router<BasicRequestContext>) {
        for name in PageFiles.names {
            router.get(RouterPath(name)) { request, _ -> Response in
                guard let file = PageFiles.file(name) else { return WebResponses.problem(.notFound("no such page")) }
                let tag = "\"\(PageFiles.version)\""
                if request.headers[.ifNoneMatch] == tag { return WebResponses.empty(304) }
                return WebResponses.bytes(file.bytes, type: file.type, headers: [.eTag: tag, .cacheControl: "no-cache"])
            }
        }
        router.get("/api/v1/openapi.json") { _, _ in
            WebResponses.bytes(PackageResources.openapi_json, type: "application/json")
        }
        let access = access
        router.post("/api/v1/login") { request, _ -> Response in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["password"])
                guard let token = await access.login(try body.requiredString("password")) else {
                    throw WebProblem.unauthorized("wrong password")
                }
                var response = WebResponses.empty()
                if !token.isEmpty {
                    response.headers[.setCookie] = "\(WebAccess.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
                }
                return response
            }
        }
    }

    // MARK: Helpers for the routes

    /// Runs a route's work; any error becomes its problem+json answer.
    static func answer(_ work: () async throws -> Response) async -> Response {
        do { return try await work() } catch {
            return WebResponses.problem(WebProblem.from(error))
        }
    }

    /// The request's body, parsed; over `maximumBody` is a 413.
    static func body(_ request: Request) async throws -> Body {
        var request = request
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: maximumBody) } catch {
            throw WebProblem.tooLarge(maximumBody)
        }
        return try Body(Array(buffer: buffer))
    }

    /// The state as it is now, for answers after a command.
    var stateNow: Response {
        Response(status: .ok, headers: WebResponses.jsonHeaders, body: .init(byteBuffer: stateText.buffer(of: player.state)))
    }

    /// The queue entry named by the path's `id`.
    static func entry(_ context: BasicRequestContext, in snapshot: PlayerSnapshot) throws -> TrackID {
        guard let serial = context.parameters.get("id").flatMap(UInt64.init) else {
            throw WebProblem.badRequest("the queue entry id must be a whole number")
        }
        return try entry(serial, in: snapshot)
    }

    /// The queue entry numbered `serial`; it must be in the queue.
    static func entry(_ serial: UInt64, in snapshot: PlayerSnapshot) throws -> TrackID {
        let id = TrackID(serial: serial)
        guard snapshot.holds(id) else { throw WebProblem(TonearmError.noSuchTrack(String(serial))) }
        return id
    }

    /// A body field naming a queue entry by its number; nil when it is not a whole number ≥ 0.
    static func serial(_ field: JSONField?) -> UInt64? {
        guard case .number(let n)? = field, n >= 0, n == n.rounded(), n < 1e18 else { return nil }
        return UInt64(n)
    }
}

import Crypto
import Foundation
import Glibc
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL

/// The request context: the connection, for the sender's address and certificate.
struct LocalSendContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The sender's IP address, without the IPv4-mapped prefix.
    var address: String {
        let ip = channel.remoteAddress?.ipAddress ?? ""
        return ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip
    }

    /// The fingerprint of the certificate the sender showed, if it showed one.
    func certificateFingerprint() async -> String? {
        guard let certificate = try? await channel.nioSSL_peerCertificate().get(), let der = try? certificate.toDERBytes() else { return nil }
        return LocalSendIdentity.fingerprint(der: der)
    }
}

/// The LocalSend HTTP(S) API over the receiver: register, info (v2 and v1), prepare-upload, upload, cancel.
public struct LocalSendServer: Sendable {
    let receiver: LocalSendReceiver
    let settings: LocalSendSettings
    let identity: LocalSendIdentity
    /// What this device says about itself.
    let info: LocalSendMessages.DeviceInfo
    let logger: Logger
    /// Called with every device that registers (for the discovery log).
    let registered: @Sendable (LocalSendMessages.DeviceInfo, String) -> Void

    public init(receiver: LocalSendReceiver, settings: LocalSendSettings, identity: LocalSendIdentity, info: LocalSendMessages.DeviceInfo,
                logger: Logger, registered: @escaping @Sendable (LocalSendMessages.DeviceInfo, String) -> Void = { _, _ in }) {
        self.receiver = receiver
        self.settings = settings
        self.identity = identity
        self.info = info
        self.logger = logger
        self.registered = registered
    }

    /// The Hummingbird application; `onRunning` gets the bound port.
    func application(onRunning: @escaping @Sendable (Int) async -> Void) throws -> some ApplicationProtocol {
        let router = Router(context: LocalSendContext.self)
        let base = "/api/localsend/v2"
        router.get("\(base)/info") { _, _ in json(info) }
        router.get("/api/localsend/v1/info") { _, _ in json(info) }
        router.post("\(base)/register") { request, context in try await register(request, context) }
        router.post("/api/localsend/v1/register") { request, context in try await register(request, context) }
        router.post("\(base)/prepare-upload") { request, context in await prepare(request, context) }
        router.post("\(base)/upload") { request, context in await upload(request, context) }
        router.post("\(base)/cancel") { request, context in
            let session = request.uri.queryParameters["sessionId"].map(String.init) ?? ""
            return reply(await receiver.cancel(session: session, address: context.address))
        }
        let server: HTTPServerBuilder
        if settings.https {
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
            // Asked for, not required; any self-signed certificate is taken: it names the sender, it vouches for nothing.
            tls.certificateVerification = .optionalVerification
            server = try .tls(.http1(), configuration: TLSChannelConfiguration(
                tlsConfiguration: tls, customAsyncVerificationCallback: { _ in .certificateVerified }))
        } else {
            server = .http1()
        }
        return Application(router: router, server: server,
                           configuration: ApplicationConfiguration(address: .hostname(settings.address, port: settings.port), serverName: "Tonearm"),
                           onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? settings.port) },
                           logger: logger)
    }

    private func register(_ request: Request, _ context: LocalSendContext) async throws -> Response {
        var request = request
        guard let body = try? await request.collectBody(upTo: 64 << 10),
              let peer = try? JSONDecoder().decode(LocalSendMessages.DeviceInfo.self, from: Data(buffer: body)) else {
            return error(400, "invalid body")
        }
        registered(peer, context.address)
        return json(info)
    }

    private func prepare(_ request: Request, _ context: LocalSendContext) async -> Response {
        var request = request
        guard let body = try? await request.collectBody(upTo: 16 << 20) else { return error(413, "the request is too large") }
        let message: LocalSendMessages.PrepareUpload
        do {
            message = try JSONDecoder().decode(LocalSendMessages.PrepareUpload.self, from: Data(buffer: body))
        } catch {
            return self.error(400, "invalid body: \(error)")
        }
        let certificate = await context.certificateFingerprint()
        let peer = LocalSendMachine.Peer(address: context.address, alias: message.info.alias,
                                         fingerprint: certificate ?? message.info.fingerprint ?? "", verified: certificate != nil,
                                         deviceModel: message.info.deviceModel, deviceType: message.info.deviceType)
        // In the order the sender listed them (ids it did not list, if the scan failed, after, by id).
        let written = Dictionary(LocalSendMessages.fileOrder(body.readableBytesView).enumerated().map { ($1, $0) }) { a, _ in a }
        let files = message.files.sorted { (written[$0.key] ?? .max, $0.key) < (written[$1.key] ?? .max, $1.key) }.map { key, file in
            LocalSendMachine.OfferedFile(id: key, fileName: file.fileName, size: file.size, fileType: file.fileType ?? "",
                                         sha256: file.sha256.flatMap { $0.isEmpty ? nil : $0.lowercased() })
        }
        let pin = request.uri.queryParameters["pin"].map(String.init)
        return reply(await receiver.prepare(peer: peer, files: files, pin: pin, channel: context.channel))
    }

    private func upload(_ request: Request, _ context: LocalSendContext) async -> Response {
        let q = request.uri.queryParameters
        let session = q["sessionId"].map(String.init) ?? "", fileID = q["fileId"].map(String.init) ?? ""
        let start = await receiver.beginUpload(session: session, file: fileID, token: q["token"].map(String.init) ?? "",
                                               address: context.address, channel: context.channel)
        guard case .receive(let file, let path) = start else {
            if case .reply(let r) = start { return reply(r) }
            return error(500, "no answer")
        }
        let result = await Self.write(request.body, to: path, expected: file.offered.size, sha256: file.offered.sha256) {
            await receiver.progress(session: session)
        }
        let answer = await receiver.endUpload(session: session, file: fileID, result: result, channel: context.channel)
        // Taken (200): handed over, or staged until the files offered before it are done. Anything else is thrown away.
        if answer.status != 200 { unlink(path) }
        return reply(answer)
    }

    /// Streams a body into a new file at `path`, counting and hashing; never more than `expected` bytes are written.
    static func write(_ body: RequestBody, to path: String, expected: Int64, sha256: String?,
                      progress: @Sendable () async -> Void) async -> LocalSendMachine.UploadResult {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .failed("cannot create the staging file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var hasher = SHA256()
        var count: Int64 = 0
        let clock = ContinuousClock()
        var lastReport = clock.now
        do {
            for try await buffer in body {
                count += Int64(buffer.readableBytes)
                if count > expected { return .tooLong }
                let ok = buffer.withUnsafeReadableBytes { bytes -> Bool in
                    hasher.update(bufferPointer: bytes)
                    var done = 0
                    while done < bytes.count {
                        let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { return false }
                        done += n
                    }
                    return true
                }
                guard ok else { return .failed("cannot write the staging file: \(String(cString: strerror(errno)))") }
                if clock.now - lastReport > .milliseconds(500) {
                    lastReport = clock.now
                    await progress()
                }
            }
        } catch {
            return count < expected ? .tooShort(received: count) : .failed("\(error)")
        }
        guard count == expected else { return .tooShort(received: count) }
        if let sha256, hasher.finalize().map({ String(format: "%02x", $0) }).joined() != sha256 { return .checksumMismatch }
        guard fsync(fd) == 0 else { return .failed("cannot flush the staging file: \(String(cString: strerror(errno)))") }
        return .complete
    }

    private func reply(_ r: LocalSendMachine.Reply) -> Response {
        if let session = r.session {
            return json(LocalSendMessages.PrepareUploadResponse(sessionId: session, files: r.tokens))
        }
        if let message = r.message { return error(r.status, message) }
        return Response(status: .init(code: r.status))
    }

    private func error(_ status: Int, _ message: String) -> Response {
        var response = json(LocalSendMessages.ErrorBody(message: message))
        response.status = .init(code: status)
        return response
    }
}

private func json(_ value: some Encodable) -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
    return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

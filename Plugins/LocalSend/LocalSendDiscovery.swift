import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Multicast discovery: announces this device on the group at start, and answers other devices' announcements
/// by registering with them over HTTP(S) (falling back to a multicast answer when that fails).
public final class LocalSendDiscovery: Sendable {
    let settings: LocalSendSettings
    let info: LocalSendMessages.DeviceInfo
    let identity: LocalSendIdentity
    let logger: Logger
    private let channel: any Channel
    private let group: SocketAddress

    /// Binds the multicast port (shared with other LocalSend programs on this machine) and joins the group.
    public init(settings: LocalSendSettings, info: LocalSendMessages.DeviceInfo, identity: LocalSendIdentity, logger: Logger) async throws {
        self.settings = settings
        self.info = info
        self.identity = identity
        self.logger = logger
        group = try SocketAddress(ipAddress: settings.multicastGroup, port: 53317)
        let inbox = Inbox()
        channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .channelInitializer { $0.pipeline.addHandler(inbox) }
            .bind(host: "0.0.0.0", port: 53317).get()
        guard let multicast = channel as? any MulticastChannel else { throw ChannelError.operationUnsupported }
        var joined = false
        for device in (try? System.enumerateDevices()) ?? [] where device.multicastSupported {
            guard case .v4? = device.address else { continue }
            if (try? await multicast.joinGroup(group, device: device).get()) != nil { joined = true }
        }
        if !joined { try await multicast.joinGroup(group).get() }
        inbox.handler.withLock { $0 = Inbox.Handler { [weak self] message, from in self?.heard(message, from: from) } }
    }

    /// Sends the announcement (a few times: multicast on a busy Wi-Fi loses packets).
    public func announce() async {
        for attempt in 0..<3 {
            if attempt > 0 { try? await Task.sleep(for: .milliseconds(500 * attempt)) }
            send(announce: true)
        }
    }

    public func stop() async {
        try? await channel.close()
    }

    private func send(announce: Bool) {
        var message = info
        message.announce = announce
        message.announcement = announce
        guard let data = try? JSONEncoder().encode(message) else { return }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: group, data: ByteBuffer(bytes: data)), promise: nil)
    }

    private func heard(_ data: ByteBuffer, from: SocketAddress) {
        guard let peer = try? JSONDecoder().decode(LocalSendMessages.DeviceInfo.self, from: Data(buffer: data)),
              peer.fingerprint != info.fingerprint, peer.announce == true || peer.announcement == true,
              let ip = from.ipAddress else { return }
        logger.info("\(peer.alias) announced itself from \(ip)")
        let port = peer.port ?? 53317, https = (peer.protocol ?? "https") == "https"
        Task { [self] in
            do {
                let status = try await Self.post(host: ip, port: port, https: https, path: "/api/localsend/v2/register",
                                                 body: try JSONEncoder().encode(info), identity: identity)
                logger.info("registered with \(peer.alias) at \(ip):\(port): HTTP \(status)")
            } catch {
                logger.info("cannot register with \(peer.alias) at \(ip):\(port) (\(error)); answering on the multicast group")
                send(announce: false)
            }
        }
    }

    /// POSTs a JSON body and returns the HTTP status; over HTTPS it shows our certificate and takes any.
    static func post(host: String, port: Int, https: Bool, path: String, body: Data, identity: LocalSendIdentity) async throws -> Int {
        let context: NIOSSLContext?
        if https {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            context = try NIOSSLContext(configuration: tls)
        } else {
            context = nil
        }
        let collector = Collector()
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(4))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let context { try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: nil)) }
                        try channel.pipeline.syncOperations.addHandler(collector)
                    }
                }
                .connect(host: host, port: port).get()
            var request = ByteBuffer(string: "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
                                         + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n")
            request.writeBytes(body)
            try await channel.writeAndFlush(request).get()
            let timeout = channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
            let answer = try await collector.done.futureResult.get()
            timeout.cancel()
            guard let line = answer.split(separator: "\r\n").first, line.hasPrefix("HTTP/"),
                  let status = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
                throw ChannelError.inputClosed
            }
            return status
        } catch {
            // A connection refused or dropped before any answer: the promise is failed, not leaked.
            collector.done.fail(error)
            throw error
        }
    }
}

/// Hands received datagrams to the discovery.
final class Inbox: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    /// Set once the discovery exists; datagrams before that are dropped.
    /// Boxed: a closure kept directly in a Mutex is wrapped in two more reabstraction thunks at every `withLock`, so
    /// each datagram would make the next call deeper.
    final class Handler: Sendable {
        let call: @Sendable (ByteBuffer, SocketAddress) -> Void
        init(_ call: @escaping @Sendable (ByteBuffer, SocketAddress) -> Void) { self.call = call }
    }
    let handler = Mutex<Handler?>(nil)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        handler.withLock { $0 }?.call(envelope.data, envelope.remoteAddress)
    }
}

/// Collects a response until the connection closes.
private final class Collector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var bytes: [UInt8] = []
    let done: EventLoopPromise<String>
    private var promise: EventLoopPromise<String>?

    init() {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        done = loop.makePromise()
        promise = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.succeed(String(decoding: bytes, as: UTF8.self))
        promise = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // An unclean TLS shutdown after a complete answer is still an answer.
        if !bytes.isEmpty {
            promise?.succeed(String(decoding: bytes, as: UTF8.self))
        } else {
            promise?.fail(error)
        }
        promise = nil
        context.close(promise: nil)
    }
}

import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// SSDP on the network: joins 239.255.255.250:1900, answers M-SEARCH from any controller, announces the device at
/// start and every half of the announcement's lifetime, and says byebye when stopped.
final class SSDPServer: Sendable {
    private let messages: SSDPMessages
    private let channel: any Channel
    private let group: SocketAddress
    /// The description URL as seen from a given requester's address.
    private let location: @Sendable (_ remote: String?) -> String
    private let logger: Logger
    private let repeating = Mutex<Task<Void, Never>?>(nil)

    init(messages: SSDPMessages, location: @escaping @Sendable (String?) -> String, logger: Logger) async throws {
        self.messages = messages
        self.location = location
        self.logger = logger
        group = try SocketAddress(ipAddress: SSDPMessages.group, port: SSDPMessages.port)
        let reader = DatagramReader()
        // Shared with other UPnP programs on this machine (a media server, another renderer).
        channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .channelInitializer { $0.pipeline.addHandler(reader) }
            .bind(host: "0.0.0.0", port: SSDPMessages.port).get()
        guard let multicast = channel as? any MulticastChannel else { throw ChannelError.operationUnsupported }
        var joined = false
        for device in (try? System.enumerateDevices()) ?? [] where device.multicastSupported {
            guard case .v4? = device.address else { continue }
            if (try? await multicast.joinGroup(group, device: device).get()) != nil { joined = true }
        }
        if !joined { try await multicast.joinGroup(group).get() }
        reader.handler.withLock { $0 = DatagramReader.Handler { [weak self] bytes, from in self?.heard(bytes, from: from) } }
    }

    /// Announces now (twice, as UDP may lose one), then again every 15 minutes.
    func start() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                for _ in 0..<2 { self?.announce(alive: true) }
                try? await Task.sleep(for: .seconds(SSDPMessages.maximumAge / 2))
            }
        }
        repeating.withLock { $0 = task }
    }

    /// Says byebye and closes the socket.
    func stop() async {
        repeating.withLock { $0 }?.cancel()
        announce(alive: false)
        try? await channel.close()
    }

    private func announce(alive: Bool) {
        let location = location(nil)
        for target in messages.targets {
            send(messages.notify(target, location: location, alive: alive), to: group)
        }
    }

    private func send(_ text: String, to address: SocketAddress) {
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: ByteBuffer(string: text)), promise: nil)
    }

    private func heard(_ bytes: ByteBuffer, from: SocketAddress) {
        guard bytes.readableBytes <= 8192, let (st, mx) = SSDPMessages.search(String(buffer: bytes)) else { return }
        let answers = messages.matching(st)
        guard !answers.isEmpty else { return }
        let location = location(from.ipAddress)
        // UPnP asks for a random wait of up to MX seconds, to spread the answers of many devices; a short one keeps
        // the spreading and lets a controller list this renderer at once.
        let delay = Int64.random(in: 0...Int64(min(max(mx, 1), 5)))
        let loop = channel.eventLoop
        loop.scheduleTask(in: .milliseconds(delay)) { [weak self] in
            guard let self else { return }
            for target in answers { self.send(self.messages.searchAnswer(target, location: location), to: from) }
        }
        logger.debug("UPnP: answered M-SEARCH \(st) from \(from)")
    }
}

/// Hands received datagrams to the server.
private final class DatagramReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    /// Boxed: a closure kept directly in a Mutex gains a reabstraction thunk at each `withLock`.
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

import Foundation
import NIOCore
import NIOPosix
import Synchronization
import XMLTree

/// Sends GENA NOTIFY requests: one connection a request, bounded in time, the answer's status read and nothing more.
enum EventNotifier {
    /// How long connecting, and then waiting for the answer, may each take.
    static let timeout: TimeAmount = .seconds(4)

    /// The propertyset body of one event.
    static func body(_ properties: [(String, String)]) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<e:propertyset xmlns:e=\"urn:schemas-upnp-org:event-1-0\">"
            + properties.map { "<e:property><\($0.0)>\(xmlEscaped($0.1))</\($0.0)></e:property>" }.joined()
            + "</e:propertyset>"
    }

    /// NOTIFYs `url`; the HTTP status of the answer.
    static func send(to url: URL, sid: String, sequence: UInt32, body: String) async throws -> Int {
        guard let host = url.host else { throw ChannelError.unknownLocalAddress }
        let port = url.port ?? 80
        let path = url.path.isEmpty ? "/" : url.path + (url.query.map { "?" + $0 } ?? "")
        let status = StatusReader()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(status) }
                }
                .connect(host: host, port: port).get()
        } catch {
            // A subscriber gone away refuses the connection: the answer's promise is failed, not leaked.
            status.finish(.failure(error))
            throw error
        }
        let bytes = Array(body.utf8)
        var request = ByteBuffer(string: "NOTIFY \(path) HTTP/1.1\r\nHOST: \(host):\(port)\r\nCONTENT-TYPE: text/xml; charset=\"utf-8\"\r\n"
                                     + "NT: upnp:event\r\nNTS: upnp:propchange\r\nSID: \(sid)\r\nSEQ: \(sequence)\r\n"
                                     + "CONTENT-LENGTH: \(bytes.count)\r\nCONNECTION: close\r\n\r\n")
        request.writeBytes(bytes)
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        try await channel.writeAndFlush(request).get()
        return try await status.answer.futureResult.get()
    }
}

/// Reads an HTTP answer's status line; the connection closing first is an error.
private final class StatusReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let answer: EventLoopPromise<Int>
    /// Completed once, from the channel's thread or from a failed connect's.
    private let done = Mutex(false)
    private var line: [UInt8] = []

    init() { answer = MultiThreadedEventLoopGroup.singleton.any().makePromise() }

    func finish(_ result: Result<Int, any Error>) {
        guard done.withLock({ was in defer { was = true }; return !was }) else { return }
        answer.completeWith(result)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        line += buffer.readBytes(length: min(buffer.readableBytes, max(0, 256 - line.count))) ?? []
        guard let end = line.firstIndex(of: 0x0D) ?? (line.count >= 256 ? line.count : nil) else { return }
        let words = String(decoding: line[..<end], as: UTF8.self).split(separator: " ")
        if words.count >= 2, words[0].hasPrefix("HTTP/"), let code = Int(words[1]) {
            finish(.success(code))
        } else {
            finish(.failure(ChannelError.inputClosed))
        }
    }

    func channelInactive(context: ChannelHandlerContext) { finish(.failure(ChannelError.inputClosed)) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }
}

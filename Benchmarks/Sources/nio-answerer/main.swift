import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix

// The floor of a state read for a server built on SwiftNIO, as the web face is (under Hummingbird): one event loop,
// NIO's HTTP/1.1 codec, and one fixed answer (a body of SIZE bytes) for every request, with no routing, no request
// context, no task per connection. `nio-answerer SIZE` prints its port. Benchmarks/web-face.py times it beside
// tonearm and Benchmarks/http-timer/answerer.c (the same floor without NIO).

/// Answers every request with the fixed body, closing the connection when the request asks to.
final class FixedAnswer: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let body: ByteBuffer
    let headers: HTTPHeaders

    init(body: ByteBuffer) {
        self.body = body
        headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(body.readableBytes))])
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data) else { return }
        var headers = headers
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        if request.isKeepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

let size = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 600 : 600
let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
let server = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(FixedAnswer(body: body))
        }
    }
    .bind(host: "127.0.0.1", port: 0).wait()
print(server.localAddress?.port ?? 0)
fflush(nil)
try server.closeFuture.wait()

import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization
import TonearmCore

/// Answers the reads a remote makes most (`GET /api/v1/state`) on the connection's event loop, from the published
/// state, as soon as the request is parsed: no task is woken and the router is not run. Everything else is handed on
/// to the router unchanged, and while a handed-on request is still being answered every later one is handed on too,
/// so answers leave in the order they were asked. A request the guard would refuse is handed on, to be refused there.
final class QuickReads: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The body of the answer to `request`, or nil when the router must answer it.
    typealias Answer = @Sendable (HTTPRequest) -> ByteBuffer?

    private let answer: Answer
    /// Requests handed on whose answer has not been written to its end.
    private var handedOn = 0
    private enum Current {
        case none
        case handedOn
        case taken(ByteBuffer, close: Bool)
    }
    private var current = Current.none

    init(answer: @escaping Answer) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if handedOn == 0, let body = answer(request) {
                current = .taken(body, close: request.headerFields[.connection]?.lowercased() == "close")
                return
            }
            handedOn += 1
            current = .handedOn
            context.fireChannelRead(data)
        case .body:
            if case .taken = current { return }
            context.fireChannelRead(data)
        case .end:
            guard case .taken(let body, let close) = current else {
                current = .none
                return context.fireChannelRead(data)
            }
            current = .none
            respond(context: context, body: body, close: close)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), handedOn > 0 { handedOn -= 1 }
        context.write(data, promise: promise)
    }

    private func respond(context: ChannelHandlerContext, body: ByteBuffer, close: Bool) {
        var fields = WebResponses.jsonHeaders
        fields[.server] = WebResponses.serverName
        fields[.date] = HTTPDate.now
        fields[.contentLength] = String(body.readableBytes)
        if close { fields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        if close {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// The `Date` header's text for now (RFC 9110's IMF-fixdate), made once a second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static var now: String {
        let seconds = time(nil)
        if let cached = cache.withLock({ $0.second == seconds ? $0.text : nil }) { return cached }
        let text = DateText.httpDate(Date(timeIntervalSince1970: TimeInterval(seconds)))
        cache.withLock { $0 = (seconds, text) }
        return text
    }
}

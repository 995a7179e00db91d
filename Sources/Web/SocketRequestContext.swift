import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The WebSocket route's request context: Hummingbird's basic one plus the connection's channel, which the event
/// follower writes its frames to from the channel's own event loop.
struct SocketRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

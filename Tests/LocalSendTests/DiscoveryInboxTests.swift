import NIOCore
import NIOEmbedded
import Synchronization
import Testing
@testable import LocalSend

@Suite struct DiscoveryInboxTests {
    /// Every multicast datagram reads the inbox's handler. Kept as a bare closure in a Mutex, it was wrapped in two
    /// more thunks at every read, so each announcement ran deeper in the stack than the one before. The thousandth
    /// must run exactly as deep as the first.
    @Test func everyDatagramReachesTheHandlerAtTheSameDepth() throws {
        let inbox = Inbox()
        let depths = Mutex<[UInt]>([])
        inbox.handler.withLock {
            $0 = Inbox.Handler { _, _ in
                var marker = 0
                let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
                depths.withLock { $0.append(address) }
            }
        }
        let channel = EmbeddedChannel(handler: inbox)
        let from = try SocketAddress(ipAddress: "127.0.0.1", port: 53317)
        for _ in 0..<1000 {
            try channel.writeInbound(AddressedEnvelope(remoteAddress: from, data: ByteBuffer(string: "{}")))
        }
        _ = try channel.finish()
        let all = depths.withLock { $0 }
        #expect(all.count == 1000)
        #expect(Set(all).count == 1, "the handler ran \((all.first ?? 0) &- (all.last ?? 0)) bytes deeper after 1000 datagrams")
    }
}

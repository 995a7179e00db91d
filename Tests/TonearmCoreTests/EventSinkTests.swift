import Foundation
import Synchronization
import Testing
@testable import TonearmCore

/// How deep in the stack a closure runs: the address of one of its locals.
func stackAddress() -> UInt {
    var marker = 0
    return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}

@Suite struct EventSinkTests {
    /// A handler kept as a bare closure in a Mutex was wrapped in two more thunks at every read, so each event ran one
    /// step deeper in the stack than the one before (a long-running daemon died of a stack overflow). The thousandth
    /// event must run exactly as deep as the first.
    @Test func everyEventReachesTheHandlerAtTheSameDepth() {
        let (_, continuation) = AsyncStream.makeStream(of: PlayerEvent.self)
        let sink = Player.EventSink(continuation)
        let depths = DepthLog()
        sink.handler.withLock { $0 = Player.EventSink.Handler { _ in depths.record(stackAddress()) } }
        for _ in 0..<1000 { sink.yield(.seeked(0)) }
        let all = depths.all
        #expect(all.count == 1000)
        #expect(Set(all).count == 1, "the handler ran \(all.first.map { $0 - (all.last ?? $0) } ?? 0) bytes deeper after 1000 events")
    }
}

/// Addresses recorded from a Sendable closure.
final class DepthLog: Sendable {
    private let addresses = Mutex<[UInt]>([])
    func record(_ address: UInt) { addresses.withLock { $0.append(address) } }
    var all: [UInt] { addresses.withLock { $0 } }
}

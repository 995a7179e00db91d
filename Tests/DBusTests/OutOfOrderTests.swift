import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// A handler whose Slow method waits until the test lets it go, and is answered out of order.
private final class SlowHandler: DBusInterfaceHandler, Sendable {
    static let xml = """
        <node><interface name="org.tonearm.Slow1">
          <method name="Slow"><arg name="Out" type="s" direction="out"/></method>
          <method name="Fast"><arg name="Out" type="s" direction="out"/></method>
        </interface></node>
        """
    let interface = try! DBusInterfaceDescription.parse(xml: SlowHandler.xml)[0]
    /// Set while Slow waits; resuming it lets Slow answer.
    let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let entered = Atomic<Bool>(false)

    func answersOutOfOrder(_ method: String) -> Bool { method == "Slow" }

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        if method == "Slow" {
            await withCheckedContinuation { continuation in
                waiting.withLock { $0 = continuation }
                entered.store(true, ordering: .sequentiallyConsistent)
            }
            return [.string("slow")]
        }
        return [.string("fast")]
    }

    func get(_ property: String) async throws -> DBusValue { throw DBusError.unknownProperty(property) }
    func set(_ property: String, _ value: DBusValue) async throws { throw DBusError.unknownProperty(property) }

    func release() { waiting.withLock { $0?.resume(); $0 = nil } }
}

@Suite struct OutOfOrderTests {
    @Test func aSlowCallHoldsNoLaterCall() async throws {
        let handler = SlowHandler()
        try await withExported(handler) { call in
            let slow = Task { try await call("Slow") }
            let inside = await eventually(timeout: .seconds(20)) { handler.entered.load(ordering: .sequentiallyConsistent) }
            try #require(inside)
            // Slow is still waiting (nothing released it): Fast is answered all the same, twice.
            #expect(try await call("Fast") == [.string("fast")])
            #expect(try await call("Fast") == [.string("fast")])
            handler.release()
            #expect(try await slow.value == [.string("slow")])
        }
    }
}

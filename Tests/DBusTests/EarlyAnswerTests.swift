import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// A handler whose Take method answers at once (`DBusCurrentCall.answerNow`), then waits until the test lets it go
/// and fails: what a command does once it is taken must neither delay nor change its answer.
private final class TakingHandler: DBusInterfaceHandler, Sendable {
    static let xml = """
        <node><interface name="org.tonearm.Taking1">
          <method name="Take"/>
          <method name="Fast"><arg name="Out" type="s" direction="out"/></method>
        </interface></node>
        """
    let interface = try! DBusInterfaceDescription.parse(xml: TakingHandler.xml)[0]
    let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let finished = Atomic<Bool>(false)

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        guard method == "Take" else { return [.string("fast")] }
        DBusCurrentCall.answerNow()
        DBusCurrentCall.answerNow()
        await withCheckedContinuation { continuation in waiting.withLock { $0 = continuation } }
        finished.store(true, ordering: .sequentiallyConsistent)
        throw DBusError.failed("too late to be seen")
    }

    func get(_ property: String) async throws -> DBusValue { throw DBusError.unknownProperty(property) }
    func set(_ property: String, _ value: DBusValue) async throws { throw DBusError.unknownProperty(property) }

    func release() { waiting.withLock { $0?.resume(); $0 = nil } }
    var isWaiting: Bool { waiting.withLock { $0 != nil } }
    var hasFinished: Bool { finished.load(ordering: .sequentiallyConsistent) }
}

@Suite struct EarlyAnswerTests {
    @Test func aCommandIsAnsweredWhenTakenNotWhenItsHandlerReturns() async throws {
        let handler = TakingHandler()
        try await withExported(handler) { call in
            // Answered (empty, once) while its handler has not returned: its later error is not what the caller gets.
            #expect(try await call("Take") == [])
            #expect(!handler.hasFinished)
            let waiting = await eventually(timeout: .seconds(20)) { handler.isWaiting }
            try #require(waiting)
            // Calls are still handled one at a time, in order: the next is answered once the handler has returned.
            let fast = Task { try await call("Fast") }
            handler.release()
            #expect(try await fast.value == [.string("fast")])
            #expect(handler.hasFinished)
        }
        // Outside a handler it does nothing.
        DBusCurrentCall.answerNow()
    }
}

@testable import DBus
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
          <method name="Quick"><arg name="Out" type="s" direction="out"/></method>
          <method name="Wrong"><arg name="Out" type="s" direction="out"/></method>
          <method name="TakeAtOnce"/>
          <method name="Announce"/>
          <signal name="Announced"><arg name="Count" type="i"/></signal>
        </interface></node>
        """
    let interface = try! DBusInterfaceDescription.parse(xml: TakingHandler.xml)[0]
    let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let finished = Atomic<Bool>(false)

    /// Whether Quick is carried out at once (on the connection's thread) when asked.
    let quickAtOnce = Atomic<Bool>(true)
    /// The connection Announce sends its signal on.
    let connection = Mutex<DBusConnection?>(nil)
    let announced = Atomic<Int>(0)
    /// TakeAtOnce holds the connection's thread while this is true.
    let atOnceHeld = Atomic<Bool>(false)
    /// Where each Quick at once ran: inside a task or not.
    let atOnceInTask = Mutex<[Bool]>([])

    func callAtOnce(_ method: String, _ arguments: [DBusValue], from sender: String) -> Result<[DBusValue], DBusError>? {
        switch method {
        case "Quick" where quickAtOnce.load(ordering: .sequentiallyConsistent):
            let inTask = withUnsafeCurrentTask { $0 != nil }
            atOnceInTask.withLock { $0.append(inTask) }
            return .success([.string("at once")])
        case "Wrong": return .success([.int32(1)])
        case "Announce":
            // Answered, then a signal sent from the connection's own thread.
            DBusCurrentCall.answerNow()
            let count = announced.add(1, ordering: .relaxed).newValue
            connection.withLock { $0 }?.emitSignal(path: "/org/tonearm/Exported", interface: "org.tonearm.Taking1",
                                                    member: "Announced", arguments: [.int32(Int32(count))])
            return .success([])
        case "TakeAtOnce":
            // Answered, then held on the connection's thread until the test has seen the answer.
            atOnceHeld.store(true, ordering: .sequentiallyConsistent)
            DBusCurrentCall.answerNow()
            while atOnceHeld.load(ordering: .sequentiallyConsistent) { usleep(1000) }
            return .failure(.failed("too late to be seen"))
        default: return nil
        }
    }

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        if method == "Quick" { return [.string("usual")] }
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

    @Test func aQuickCommandIsCarriedOutOnTheConnectionThreadWhenItOvertakesNothing() async throws {
        let handler = TakingHandler()
        try await withExported(handler) { server, _, call in
            #expect(try await call("Quick") == [.string("at once")])
            #expect(handler.atOnceInTask.withLock { $0 } == [false])
            // Declined: the usual way.
            handler.quickAtOnce.store(false, ordering: .sequentiallyConsistent)
            #expect(try await call("Quick") == [.string("usual")])
            handler.quickAtOnce.store(true, ordering: .sequentiallyConsistent)
            // Out-arguments not as declared: an error, as on the usual path.
            let wrong = await dbusError { _ = try await call("Wrong") }
            #expect(wrong?.name == "org.freedesktop.DBus.Error.Failed")
            // Answered early on the connection's thread: the caller has its answer while the command goes on.
            #expect(try await call("TakeAtOnce") == [])
            let held = handler.atOnceHeld.load(ordering: .sequentiallyConsistent)
            #expect(held)
            handler.atOnceHeld.store(false, ordering: .sequentiallyConsistent)
            #expect(try await call("Quick") == [.string("at once")])

            // While an earlier call is still being handled (answered, its handler not returned), Quick does not
            // overtake it: it goes the usual way, after it.
            #expect(try await call("Take") == [])
            let waiting = await eventually(timeout: .seconds(20)) { handler.isWaiting }
            try #require(waiting)
            let quick = Task { try await call("Quick") }
            let queued = await eventually(timeout: .seconds(20)) { server.core.callsBeingHandled.load(ordering: .relaxed) == 2 }
            try #require(queued)
            handler.release()
            #expect(try await quick.value == [.string("usual")])
            #expect(handler.hasFinished)
            #expect(handler.atOnceInTask.withLock { $0 } == [false, false])
        }
    }

    @Test func aSignalSentFromTheConnectionThreadLeavesInOrder() async throws {
        let handler = TakingHandler()
        try await withExported(handler) { server, client, call in
            handler.connection.withLock { $0 = server }
            defer { handler.connection.withLock { $0 = nil } }
            let signals = try await client.subscribe(DBusMatchRule(sender: server.uniqueName, interface: "org.tonearm.Taking1",
                                                                    member: "Announced"))
            // Each sent at once from the connection's thread, nothing else queued: they arrive, in the order sent.
            for _ in 0..<20 { #expect(try await call("Announce") == []) }
            var counts: [Int32] = []
            for await signal in signals {
                counts.append(Int32(signal.arguments.first?.int64Value ?? 0))
                if counts.count == 20 { break }
            }
            #expect(counts == Array(1...20))
        }
    }

    @Test func aQuickCommandHeldByTheGateGoesTheUsualWay() async throws {
        let handler = TakingHandler()
        try await withExported(handler, held: true) { server, _, call in
            let quick = Task { try await call("Quick") }
            let held = await eventually(timeout: .seconds(20)) { server.gate.waiterCount == 1 }
            try #require(held)
            server.releaseIncomingCalls()
            #expect(try await quick.value == [.string("usual")])
            #expect(handler.atOnceInTask.withLock { $0 }.isEmpty)
        }
    }
}

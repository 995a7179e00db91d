import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// The sample interface exported by the tests' server.
let sampleXML = """
<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<node>
  <!-- A test interface exercising every kind of member. -->
  <interface name="org.tonearm.Test1">
    <method name="EchoVariant">
      <arg name="value" type="v" direction="in"/>
      <arg name="same" type="v" direction="out"/>
    </method>
    <method name="EchoMany">
      <arg name="dict" type="a{sv}" direction="in"/>
      <arg name="strings" type="as" direction="in"/>
      <arg name="paths" type="ao" direction="in"/>
      <arg name="big" type="x" direction="in"/>
      <arg name="real" type="d" direction="in"/>
      <arg name="flag" type="b" direction="in"/>
      <arg name="count" type="u" direction="in"/>
      <arg name="tracks" type="aa{sv}" direction="in"/>
      <arg type="a{sv}" direction="out"/>
      <arg type="as" direction="out"/>
      <arg type="ao" direction="out"/>
      <arg type="x" direction="out"/>
      <arg type="d" direction="out"/>
      <arg type="b" direction="out"/>
      <arg type="u" direction="out"/>
      <arg type="aa{sv}" direction="out"/>
    </method>
    <method name="Add">
      <arg name="a" type="i"/>
      <arg name="b" type="i"/>
      <arg name="sum" type="i" direction="out"/>
    </method>
    <method name="Fail">
      <arg name="reason" type="s" direction="in"/>
    </method>
    <method name="Crash"/>
    <method name="Sleep">
      <arg name="milliseconds" type="u" direction="in"/>
    </method>
    <method name="Emit">
      <arg name="count" type="u" direction="in"/>
      <annotation name="org.freedesktop.DBus.Method.NoReply" value="false"/>
    </method>
    <method name="Record">
      <arg name="note" type="s" direction="in"/>
    </method>
    <method name="BadReturn">
      <arg type="s" direction="out"/>
    </method>
    <signal name="Tick">
      <arg name="n" type="u"/>
    </signal>
    <property name="Name" type="s" access="readwrite"/>
    <property name="Volume" type="d" access="readwrite">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="true"/>
    </property>
    <property name="Count" type="x" access="read"/>
    <property name="Clock" type="x" access="read"/>
    <property name="Label" type="s" access="read"/>
    <property name="Tags" type="as" access="readwrite"/>
    <property name="Metadata" type="a{sv}" access="read"/>
    <property name="Anything" type="v" access="readwrite"/>
    <property name="Secret" type="s" access="write"/>
    <annotation name="org.tonearm.Comment" value="quotes &quot; &amp; &lt;angles&gt;"/>
  </interface>
  <interface name="org.tonearm.Other1">
    <method name="Hello">
      <arg name="greeting" type="s" direction="out"/>
    </method>
  </interface>
</node>
"""

let sampleInterfaces: [DBusInterfaceDescription] = try! DBusInterfaceDescription.parse(xml: sampleXML)

struct TestFailure: Error, CustomStringConvertible {
    var description: String
}

/// The server side of the sample interface.
final class TestHandler: DBusInterfaceHandler {
    let interface = sampleInterfaces[0]
    struct State {
        var name = "tonearm"
        var volume = 0.5
        var tags = ["a", "b"]
        var anything: DBusValue = .variant(.int32(7))
        var secret = ""
        var notes: [String] = []
        var slept = 0
        var sleeping = 0
        var emitter: DBusConnection?
    }
    let state = Mutex(State())

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        switch method {
        case "EchoVariant", "EchoMany": return arguments
        case "Add":
            guard case .int32(let a) = arguments[0], case .int32(let b) = arguments[1] else { throw DBusError.invalidArgs("?") }
            return [.int32(a &+ b)]
        case "Fail": throw DBusError(name: "org.tonearm.Error.X", message: arguments[0].stringValue ?? "")
        case "Crash": throw TestFailure(description: "something broke")
        case "Sleep":
            state.withLock { $0.sleeping += 1 }
            await letTimePass(.milliseconds(Int(arguments[0].int64Value ?? 0)), because: "a method that is slow on purpose")
            state.withLock { $0.slept += 1 }
            return []
        case "Emit":
            let conn = state.withLock { $0.emitter }
            for i in 0..<UInt32(arguments[0].int64Value ?? 0) {
                conn?.emitSignal(path: "/org/tonearm/Test", interface: interface.name, member: "Tick", arguments: [.uint32(i)])
            }
            return []
        case "Record":
            state.withLock { $0.notes.append(arguments[0].stringValue ?? "") }
            return []
        case "BadReturn": return [.int32(1)]
        default: throw DBusError.unknownMethod(method)
        }
    }

    func get(_ property: String) async throws -> DBusValue {
        state.withLock { s in
            switch property {
            case "Name": return .string(s.name)
            case "Volume": return .double(s.volume)
            case "Count": return .int64(42)
            case "Tags": return .stringArray(s.tags)
            case "Metadata": return .vardict(["xesam:title": .string("Song"), "mpris:length": .int64(1_000_000)])
            case "Anything": return s.anything
            case "Clock": return .int64(1)  // 1 through `get`, 2 from `currentValue`: shows which path answered
            case "Label": return .string("through get")
            default: return .string("?")
            }
        }
    }

    func currentValue(_ property: String) -> DBusValue? {
        switch property {
        case "Clock": .int64(2)
        case "Label": .int32(5)  // the wrong type: ignored, `get` answers
        default: nil
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        try state.withLock { s in
            switch property {
            case "Name": s.name = value.stringValue ?? ""
            case "Volume":
                guard let v = value.doubleValue, v >= 0 else { throw DBusError(name: "org.tonearm.Error.BadVolume", message: "volume must be ≥ 0") }
                s.volume = v
            case "Tags": s.tags = (value.arrayValue ?? []).compactMap(\.stringValue)
            case "Anything": s.anything = value
            case "Secret": s.secret = value.stringValue ?? ""
            default: throw DBusError.unknownProperty(property)
            }
        }
    }
}

struct OtherHandler: DBusInterfaceHandler {
    let interface = sampleInterfaces[1]
    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        [.string("hello \(sender)")]
    }
    func get(_ property: String) async throws -> DBusValue { throw DBusError.unknownProperty(property) }
    func set(_ property: String, _ value: DBusValue) async throws { throw DBusError.unknownProperty(property) }
}

let serviceName = "org.tonearm.Test"
let objectPath = "/org/tonearm/Test"
let testInterface = "org.tonearm.Test1"

/// A private bus with a server exporting the sample interface and a client.
struct Fixture {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    let handler: TestHandler

    init() throws {
        bus = try PrivateBus.start()
        server = try DBusConnection.connect(address: bus.address)
        client = try DBusConnection.connect(address: bus.address)
        handler = TestHandler()
        handler.state.withLock { $0.emitter = server }
        server.export(path: objectPath, handlers: [handler, OtherHandler()])
        #expect(try server.requestName(serviceName) == .primaryOwner)
    }

    func call(_ member: String, _ args: [DBusValue] = [], interface: String = testInterface,
              path: String = objectPath, timeout: Duration = .seconds(10)) async throws -> [DBusValue] {
        try await client.call(destination: serviceName, path: path, interface: interface, member: member,
                              arguments: args, timeout: timeout)
    }

    func shutdown() {
        handler.state.withLock { $0.emitter = nil }
        client.close()
        server.close()
        bus.stop()
    }
}

/// Runs `body` with a fresh fixture, always shutting it down.
func withFixture(_ body: (Fixture) async throws -> Void) async throws {
    let f = try Fixture()
    defer { f.shutdown() }
    try await body(f)
}

/// Runs `body` with `handler` exported by a server on a fresh private bus, and a call of its interface's methods from
/// a client (30 s timeout: what a test holds back is let go by the test, not by the clock); always shut down.
func withExported(_ handler: some DBusInterfaceHandler, _ body: (_ call: @escaping @Sendable (String) async throws -> [DBusValue]) async throws -> Void)
    async throws {
    try await withExported(handler) { _, _, call in try await body(call) }
}

/// The same, with the server's and the client's connections too (to hold the server's calls, look at what it is
/// handling, or subscribe to its signals).
func withExported(_ handler: some DBusInterfaceHandler, held: Bool = false,
                  _ body: (_ server: DBusConnection, _ client: DBusConnection,
                           _ call: @escaping @Sendable (String) async throws -> [DBusValue]) async throws -> Void)
    async throws {
    let bus = try PrivateBus.start()
    defer { bus.stop() }
    let server = try DBusConnection.connect(address: bus.address)
    let client = try DBusConnection.connect(address: bus.address)
    defer {
        client.close()
        server.close()
    }
    if held { server.holdIncomingCalls() }
    server.export(path: "/org/tonearm/Exported", handlers: [handler])
    let (destination, interface) = (server.uniqueName, handler.interface.name)
    try await body(server, client) { member in
        try await client.call(destination: destination, path: "/org/tonearm/Exported", interface: interface, member: member,
                              timeout: .seconds(30))
    }
}

/// The DBusError thrown by `body`, or nil.
func dbusError(_ body: () async throws -> Void) async -> DBusError? {
    do {
        try await body()
        return nil
    } catch let e as DBusError {
        return e
    } catch {
        return DBusError(name: "not-a-DBusError", message: "\(error)")
    }
}

/// Runs a command-line tool on a thread of its own (never blocking the cooperative pool, which
/// the server under test needs to answer it), returning (status, stdout, stderr).
func run(_ tool: String, _ arguments: [String]) async throws -> (Int32, String, String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try runBlocking(tool, arguments) })
        }.start()
    }
}

private func runBlocking(_ tool: String, _ arguments: [String]) throws -> (Int32, String, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

/// Whether a process with this pid exists (zombies excluded).
func processExists(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // The state field follows the ")" of the command name.
    guard let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
    return state != "Z" && state != "X"
}

import Foundation
import Synchronization

/// One connection to a bus, driven by its own poll-loop thread (see `ConnectionCore`).
///
/// Everything may be called from any thread. Sends never block: the message is queued for the
/// connection's thread, which is woken and writes it at once. Incoming method calls on exported
/// paths are handled one at a time, in arrival order, by one consumer task.
public final class DBusConnection: Sendable {
    let core: ConnectionCore
    let objects = ObjectTree()
    let gate = CallGate()
    /// Small signals sent lately, kept built (`SignalTemplates`).
    private let templates = Mutex(SignalTemplates())

    private init(core: ConnectionCore) {
        self.core = core
        let objects = self.objects
        let gate = self.gate
        core.start(responder: ConnectionCore.ImmediateResponder(
            reads: { objects.immediateReply($0, if: gate.letsRead) ?? objects.immediateStandardReply($0) },
            // A command only when it overtakes nothing held back by the gate either.
            commands: { gate.isOpen ? objects.immediateCall($0) : nil }))
        Task.detached { [core, objects, gate] in
            @Sendable func answer(_ call: IncomingCall, _ result: Result<[DBusValue], DBusError>) {
                core.enqueue(.reply(call.noReply ? nil : MessageBox.reply(to: call, result), sender: call.sender))
            }
            @Sendable func handle(_ call: IncomingCall) async {
                // A property read held since before reads were let through is answered as soon as they are, by the
                // thread letting them through (so a client that asked early is not stuck behind its own read, nor
                // behind a start keeping every worker busy); the rest waits for the release.
                if !gate.isOpen, let reading = ObjectTree.readInterface(call) {
                    @Sendable func answerIfReadable() -> Bool {
                        guard let values = objects.immediateReply(call, if: gate.letsRead) else { return false }
                        answer(call, .success(values))
                        return true
                    }
                    if await gate.pass(reading: reading, answer: answerIfReadable) { return }
                    if !gate.isOpen, answerIfReadable() { return }
                }
                await gate.pass()
                let once = CallAnswer { answer(call, $0) }
                if objects.answersOutOfOrder(call) {
                    Task { await once.handle(call, by: objects) }
                    return
                }
                await once.handle(call, by: objects)
            }
            for await call in core.incomingCalls {
                await handle(call)
                // Only now, its handler returned (an early answer may have gone long before), may a command overtake.
                core.callsBeingHandled.subtract(1, ordering: .releasing)
            }
            // Closed: let go of the handlers (they often hold this connection).
            objects.removeAll()
        }
    }

    deinit { core.close() }

    /// The session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when that socket exists.
    /// Throws `DBusError` (`NoServer`) if there is none or it cannot be reached.
    public static func session() throws -> DBusConnection {
        let env = ProcessInfo.processInfo.environment
        if let address = env["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return try connect(address: address)
        }
        if let runtime = env["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            let socket = runtime + "/bus"
            if FileManager.default.fileExists(atPath: socket) {
                return try connect(address: "unix:path=" + socket)
            }
        }
        throw DBusError.noServer("no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist")
    }

    /// Connects to the bus at `address` (e.g. `unix:path=/run/user/1000/bus`) and registers on it.
    public static func connect(address: String) throws -> DBusConnection {
        DBusConnection(core: try ConnectionCore(address: address))
    }

    /// This connection's unique name, e.g. `:1.42`.
    public var uniqueName: String { core.uniqueName }

    /// Whether `close()` was called or the bus went away.
    public var isClosed: Bool { core.isClosed }

    public enum NameRequestResult: Sendable, Equatable {
        case primaryOwner, alreadyOwner, exists, inQueue
    }

    /// Requests a well-known name with `DO_NOT_QUEUE` (waits for the bus's answer).
    public func requestName(_ name: String) throws -> NameRequestResult {
        let reply = try callBlocking(member: "RequestName", arguments: [.string(name), .uint32(4)])
        switch reply.first {
        case .uint32(1): return .primaryOwner
        case .uint32(2): return .inQueue
        case .uint32(3): return .exists
        case .uint32(4): return .alreadyOwner
        default: throw DBusError.failed("unexpected RequestName reply \(reply)")
        }
    }

    /// Releases a well-known name; true if this connection owned it.
    @discardableResult
    public func releaseName(_ name: String) throws -> Bool {
        let reply = try callBlocking(member: "ReleaseName", arguments: [.string(name)])
        return reply.first == .uint32(1)
    }

    /// A call to the bus driver that waits on a semaphore (never inside libdbus).
    private func callBlocking(member: String, arguments: [DBusValue]) throws -> [DBusValue] {
        let box = try MessageBox.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                            interface: "org.freedesktop.DBus", member: member, arguments: arguments)
        let semaphore = DispatchSemaphore(value: 0)
        let result = Mutex<Result<[DBusValue], DBusError>?>(nil)
        core.send(box, timeout: .seconds(25)) { r in
            result.withLock { $0 = r }
            semaphore.signal()
        }
        semaphore.wait()
        return try result.withLock { $0! }.get()
    }

    /// Keeps incoming method calls waiting (queued, in order) until `releaseIncomingCalls`: a service can take its
    /// well-known name before it is ready to answer, the way D-Bus activation and socket activation expect.
    public func holdIncomingCalls() {
        gate.hold()
    }

    /// While calls are held, answers property reads (Get, GetAll) of `interfaces` from their handlers' current values
    /// at once, unless the same sender has a call held before them (so a sender's read still follows its write).
    /// For a service whose published state is ready before the rest of it.
    public func answerReadsWhileHeld(_ interfaces: Set<String>) {
        gate.letReads(interfaces)
    }

    /// Answers the calls held since `holdIncomingCalls`, in arrival order, and every call after them.
    public func releaseIncomingCalls() {
        gate.release()
    }

    /// Exports `handlers` at `path` (replacing what was there; an empty list unexports).
    public func export(path: String, handlers: [any DBusInterfaceHandler]) {
        objects.export(path: path, handlers: handlers)
    }

    /// Removes the object at `path`.
    public func unexport(path: String) {
        objects.unexport(path: path)
    }

    /// Emits a signal. Non-blocking, any thread; the message leaves at once. Invalid names or
    /// values are reported on stderr and the signal is dropped (use `trySendSignal` to get the error);
    /// after `close()` signals are dropped silently.
    public func emitSignal(path: String, interface: String, member: String, arguments: [DBusValue]) {
        do {
            try trySendSignal(path: path, interface: interface, member: member, arguments: arguments)
        } catch let e as DBusError where e.name == DBusError.disconnected("").name {
            return  // closing down: nothing to tell
        } catch {
            FileHandle.standardError.write(Data("DBus: dropped signal \(interface).\(member) on \(path): \(error)\n".utf8))
        }
    }

    /// Emits a signal, throwing `InvalidArgs` for invalid names/values and `Disconnected` once closed.
    public func trySendSignal(path: String, interface: String, member: String, arguments: [DBusValue]) throws {
        let key = SignalTemplates.keeps(arguments)
            ? SignalTemplates.Key(path: path, interface: interface, member: member, arguments: arguments) : nil
        let box: MessageBox
        if let key, let copy = templates.withLock({ $0.copy(of: key) }) {
            box = copy
        } else {
            box = try MessageBox.signal(path: path, interface: interface, member: member, arguments: arguments)
            if let key { templates.withLock { $0.keep(box, for: key) } }
        }
        guard core.enqueue(.send(box, nil, timeout: 0)) else { throw DBusError.disconnected("the connection is closed") }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` (sa{sv}as).
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: DBusValue],
                                      invalidated: [String] = []) {
        emitSignal(path: path, interface: ObjectTree.properties, member: "PropertiesChanged",
                   arguments: [.string(interface), .vardict(changed), .stringArray(invalidated)])
    }

    /// Calls a method; throws `DBusError` with the remote error's name (`NoReply` on timeout).
    /// A nil `interface` leaves the header field out (the receiver finds the method by name).
    public func call(destination: String, path: String, interface: String?, member: String,
                     arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        let box = try MessageBox.methodCall(destination: destination, path: path, interface: interface,
                                            member: member, arguments: arguments)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[DBusValue], any Error>) in
            core.send(box, timeout: timeout) { result in
                continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// `org.freedesktop.DBus.Properties.Get`, the variant unwrapped.
    public func getProperty(destination: String, path: String, interface: String, name: String) async throws -> DBusValue {
        let reply = try await call(destination: destination, path: path, interface: ObjectTree.properties,
                                   member: "Get", arguments: [.string(interface), .string(name)])
        guard let v = reply.first else { throw DBusError.invalidArgs("Get returned nothing") }
        return v.unwrapped
    }

    /// `org.freedesktop.DBus.Properties.Set` (the value is wrapped in a variant for you).
    public func setProperty(destination: String, path: String, interface: String, name: String,
                            value: DBusValue) async throws {
        let wrapped: DBusValue = if case .variant = value { value } else { .variant(value) }
        _ = try await call(destination: destination, path: path, interface: ObjectTree.properties,
                           member: "Set", arguments: [.string(interface), .string(name), wrapped])
    }

    /// `org.freedesktop.DBus.Properties.GetAll`, values unwrapped.
    public func getAllProperties(destination: String, path: String, interface: String) async throws -> [String: DBusValue] {
        let reply = try await call(destination: destination, path: path, interface: ObjectTree.properties,
                                   member: "GetAll", arguments: [.string(interface)])
        guard let dict = reply.first?.vardictValue else { throw DBusError.invalidArgs("GetAll returned \(reply)") }
        return dict
    }

    /// Whether `name` currently has an owner on the bus.
    public func nameHasOwner(_ name: String) async throws -> Bool {
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "NameHasOwner", arguments: [.string(name)])
        return reply.first?.boolValue ?? false
    }

    /// The unique name owning `name`, or nil.
    public func nameOwner(_ name: String) async throws -> String? {
        do {
            let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string(name)])
            return reply.first?.stringValue
        } catch let e as DBusError where e.name == DBusError.nameHasNoOwner("").name {
            return nil
        }
    }

    /// Signals matching `rule`, in arrival order. The match is added when this returns (queued
    /// ahead of anything this connection sends afterwards) and removed when the stream ends.
    /// A well-known `sender` is followed across owner changes.
    public func signals(matching rule: DBusMatchRule) -> AsyncStream<DBusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
        startSubscription(rule, continuation, ready: nil)
        return stream
    }

    /// Like `signals(matching:)`, but returns once the bus has confirmed the match (and resolved a
    /// well-known sender), so no signal emitted afterwards by anyone can be missed.
    public func subscribe(_ rule: DBusMatchRule) async throws -> AsyncStream<DBusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
        do {
            try await withCheckedThrowingContinuation { (ready: CheckedContinuation<Void, any Error>) in
                startSubscription(rule, continuation) { result in ready.resume(with: result.mapError { $0 as any Error }) }
            }
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    private func startSubscription(_ rule: DBusMatchRule, _ continuation: AsyncStream<DBusSignal>.Continuation,
                                   ready: (@Sendable (Result<Void, DBusError>) -> Void)?) {
        guard let id = core.addSubscription(rule, continuation) else {
            continuation.finish()
            ready?(.failure(.disconnected("the connection is closed")))
            return
        }
        let followOwner = rule.sender.map { !$0.hasPrefix(":") && $0 != "org.freedesktop.DBus" } ?? false
        var ruleList = [rule.ruleString]
        if followOwner, let name = rule.sender {
            ruleList.append("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                            + "member='NameOwnerChanged',arg0=" + DBusMatchRule.quote(name))
        }
        let rules = ruleList
        let core = self.core
        // Replies come back in order, so the last one says all is set up.
        for (n, r) in rules.enumerated() {
            let last = n == rules.count - 1 && !followOwner
            var handler: ReplyHandler? = nil
            if last, let ready {
                handler = { @Sendable result in
                    switch result {
                    case .success: ready(.success(()))
                    case .failure(let e): ready(.failure(e))
                    }
                }
            }
            Self.busDriverCall(core, "AddMatch", r, handler)
        }
        if followOwner, let name = rule.sender {
            Self.busDriverCall(core, "GetNameOwner", name) { result in
                if case .success(let v) = result { core.setOwner(v.first?.stringValue, subscription: id) }
                if let ready { ready(.success(())) }
            }
        }
        continuation.onTermination = { _ in
            core.removeSubscription(id)
            for r in rules { Self.busDriverCall(core, "RemoveMatch", r, nil) }
        }
    }

    private static func busDriverCall(_ core: ConnectionCore, _ member: String, _ arg: String, _ handler: ReplyHandler?) {
        guard let box = try? MessageBox.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                   interface: "org.freedesktop.DBus", member: member,
                                                   arguments: [.string(arg)]) else {
            handler?(.failure(.invalidArgs("invalid match rule")))
            return
        }
        core.send(box, handler: handler)
    }

    /// Returns once the connection is closed or the bus has gone away.
    public func waitUntilClosed() async {
        // Signal streams finish when the connection ends; org.freedesktop.DBus.Local is never delivered as a signal.
        for await _ in signals(matching: DBusMatchRule(interface: "org.freedesktop.DBus.Local")) {}
    }

    /// Closes the connection: queued messages are sent first, pending calls fail with
    /// `Disconnected`, signal streams finish. Idempotent.
    public func close() { core.close() }

    /// Closes the connection once every call already handed to the handlers is answered (waiting at most 5 s), so
    /// those replies leave first: a Quit's, say. Then as `close()`; await `waitUntilClosed()` to know it is done.
    public func closeAfterReplies() { core.closeAfterReplies() }
}

internal import CDBus
internal import CLinux
import Foundation
import Synchronization

/// The result of a call as seen by a reply handler.
typealias ReplyHandler = @Sendable (Result<[DBusValue], DBusError>) -> Void

/// An incoming method call, decoded on the loop thread.
struct IncomingCall: Sendable {
    var serial: UInt32
    var sender: String
    var path: String
    var interface: String?
    var member: String
    var signature: String
    var arguments: Result<[DBusValue], DBusError>
    var noReply: Bool
}

/// The C-thread bridge: one libdbus connection driven by one thread of its own running a
/// `poll()` loop over libdbus's watches and timeouts plus an eventfd to wake it.
///
/// Every libdbus call on the connection (send, dispatch, watch/timeout handling, close) happens
/// on that thread; other threads only build messages and queue them (`enqueue`), then wake the
/// loop, so a message from any thread leaves at once and nobody else ever blocks in libdbus.
/// The C callbacks below touch only this Sendable object (Mutex/Atomic state, the eventfd) and,
/// for the filter, the loop-confined `LoopContext`.
final class ConnectionCore: Sendable {
    nonisolated(unsafe) let connection: OpaquePointer
    let uniqueName: String
    let wakeFD: Int32

    enum Work: Sendable {
        case send(MessageBox, ReplyHandler?, timeout: UInt64)
        /// The answer to an incoming call handed to `incomingCalls` (nil: none is wanted or it could not be built).
        case reply(MessageBox?, sender: String)
        case close
        /// Close once the calls handed to `incomingCalls` so far are answered (or after `ConnectionCore.replyGrace`).
        case closeAfterReplies
    }

    /// How long `closeAfterReplies` waits for the answers of the calls being handled.
    static let replyGrace: UInt64 = 5_000_000_000

    /// Answers an incoming call on the loop thread itself, or nil to hand it to `incomingCalls`: `reads` a property
    /// read, `commands` a command, asked only while no call of any sender is being handled (even one already
    /// answered), so it overtakes none; it may answer before it is done (`DBusCurrentCall.answerNow`).
    struct ImmediateResponder: Sendable {
        var reads: @Sendable (IncomingCall) -> [DBusValue]?
        var commands: @Sendable (IncomingCall) -> Result<[DBusValue], DBusError>?
    }

    struct Subscription: Sendable {
        var rule: DBusMatchRule
        var continuation: AsyncStream<DBusSignal>.Continuation
        /// The unique name owning `rule.sender` when that is a well-known name.
        var owner: String?
    }

    struct Shared: Sendable {
        var queue: [Work] = []
        var watches: Set<UInt> = []
        var timeouts: [UInt: UInt64] = [:]  // timeout → deadline (monotonic ns), enabled ones only
        var closed = false
        var subscriptions: [Int: Subscription] = [:]
        var nextSubscription = 0
    }

    let shared = Mutex(Shared())
    private let wakePending = Atomic<Bool>(false)
    /// Calls handed to `incomingCalls` whose handling has not ended (the consumer lowers it when a handler returns).
    let callsBeingHandled = Atomic<Int>(0)
    /// The loop's thread, once it runs (0 before).
    private let loopThread = Atomic<UInt>(0)
    let incomingCalls: AsyncStream<IncomingCall>
    let incomingContinuation: AsyncStream<IncomingCall>.Continuation

    /// Opens a private connection and registers on the bus (blocking, before the loop exists).
    init(address: String) throws {
        _ = ConnectionCore.threadsInitialised
        var err = CDBus.DBusError()
        dbus_error_init(&err)
        defer { dbus_error_free(&err) }
        guard !address.utf8.contains(0), let conn = dbus_connection_open_private(address, &err) else {
            throw ConnectionCore.swiftError(&err, fallback: .noServer("cannot connect to \(address)"))
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &err) != 0 else {
            let e = ConnectionCore.swiftError(&err, fallback: .noServer("cannot register on \(address)"))
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            throw e
        }
        let fd = cdbus_eventfd()
        guard fd >= 0 else {
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            throw DBusError.failed("eventfd: errno \(errno)")
        }
        connection = conn
        wakeFD = fd
        uniqueName = dbus_bus_get_unique_name(conn).map { String(cString: $0) } ?? ""
        (incomingCalls, incomingContinuation) = AsyncStream.makeStream(of: IncomingCall.self, bufferingPolicy: .unbounded)
    }

    private static let threadsInitialised: Bool = { dbus_threads_init_default() != 0 }()

    static func swiftError(_ err: inout CDBus.DBusError, fallback: DBusError) -> DBusError {
        guard dbus_error_is_set(&err) != 0 else { return fallback }
        return DBusError(name: err.name.map { String(cString: $0) } ?? fallback.name,
                         message: err.message.map { String(cString: $0) } ?? "")
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Starts the loop thread; `responder` may answer calls at once while no earlier call is being handled.
    func start(responder: ImmediateResponder? = nil) {
        let context = LoopContext(core: self, responder: responder)
        let thread = Thread { [self] in
            _ = tn_name_this_thread("dbus-connection")
            loopThread.store(pthread_self(), ordering: .releasing)
            context.run()
        }
        thread.start()
    }

    // MARK: Any thread

    /// Queues work for the loop; false (and nothing queued) once the connection is closed. A message that wants no
    /// reply (a signal), sent from the loop's own thread with nothing queued before it, leaves at once instead: a
    /// command carried out there (`callAtOnce`) sends its PropertiesChanged without waking the loop through the eventfd.
    @discardableResult
    func enqueue(_ work: Work) -> Bool {
        let onLoop = loopThread.load(ordering: .acquiring) == pthread_self()
        let (ok, now) = shared.withLock { s -> (Bool, MessageBox?) in
            guard !s.closed else { return (false, nil) }
            if onLoop, s.queue.isEmpty, case .send(let box, nil, _) = work { return (true, box) }
            s.queue.append(work)
            return (true, nil)
        }
        if let now {
            _ = dbus_connection_send(connection, now.message, nil)
            return true
        }
        if ok { wake() }
        return ok
    }

    /// Sends a message; `handler` (called on the loop thread) gets the reply or the error.
    func send(_ box: MessageBox, timeout: Duration? = nil, handler: ReplyHandler? = nil) {
        var ns: UInt64 = 25_000_000_000
        if let timeout {
            let (s, atto) = timeout.components
            ns = s <= 0 && atto <= 0 ? 1 : UInt64(clamping: s) &* 1_000_000_000 &+ UInt64(clamping: atto / 1_000_000_000)
        }
        if !enqueue(.send(box, handler, timeout: ns)) {
            handler?(.failure(.disconnected("the connection is closed")))
        }
    }

    var isClosed: Bool { shared.withLock { $0.closed } }

    /// libdbus's wake-ups (and its "data remains"): it asks for them for every message it reads, also on the loop's
    /// own thread, where there is nothing to wake (every libdbus call the loop makes there is followed by a dispatch
    /// before it polls again), and the eventfd's write and read were two system calls more per call answered.
    fileprivate func wakeForLibdbus() {
        if loopThread.load(ordering: .acquiring) == pthread_self() { return }
        wake()
    }

    /// Wakes the loop; coalesced, and never writes to the eventfd after it is closed.
    func wake() {
        if wakePending.exchange(true, ordering: .acquiringAndReleasing) { return }
        shared.withLock { s in
            if !s.closed { cdbus_eventfd_signal(wakeFD) }
        }
    }

    func close() { enqueue(.close) }

    func closeAfterReplies() { enqueue(.closeAfterReplies) }

    // MARK: Subscriptions

    func addSubscription(_ rule: DBusMatchRule, _ continuation: AsyncStream<DBusSignal>.Continuation) -> Int? {
        shared.withLock { s -> Int? in
            guard !s.closed else { return nil }
            s.nextSubscription += 1
            s.subscriptions[s.nextSubscription] = Subscription(rule: rule, continuation: continuation, owner: nil)
            return s.nextSubscription
        }
    }

    func removeSubscription(_ id: Int) {
        _ = shared.withLock { $0.subscriptions.removeValue(forKey: id) }
    }

    func setOwner(_ owner: String?, subscription id: Int) {
        shared.withLock { $0.subscriptions[id]?.owner = owner }
    }

    // MARK: Loop thread

    /// Drain first, then clear the flag, then (caller) take the queue: a wake-up that finds the
    /// flag still set is then always followed by a queue read or by an eventfd write.
    fileprivate func drainWake() {
        cdbus_eventfd_drain(wakeFD)
        wakePending.store(false, ordering: .sequentiallyConsistent)
    }

    /// Delivers a signal to matching subscribers in arrival order (loop thread).
    fileprivate func deliver(_ signal: DBusSignal) {
        let targets = shared.withLock { s -> [AsyncStream<DBusSignal>.Continuation] in
            if signal.sender == "org.freedesktop.DBus", signal.interface == "org.freedesktop.DBus",
               signal.member == "NameOwnerChanged", signal.arguments.count == 3,
               let name = signal.arguments[0].stringValue, let new = signal.arguments[2].stringValue {
                for (id, sub) in s.subscriptions where sub.rule.sender == name {
                    s.subscriptions[id]?.owner = new.isEmpty ? nil : new
                }
            }
            return s.subscriptions.keys.sorted().compactMap { id in
                let sub = s.subscriptions[id]!
                return sub.rule.matches(signal, owner: sub.owner) ? sub.continuation : nil
            }
        }
        for c in targets { c.yield(signal) }
    }

    /// Tear-down after the loop ends (loop thread).
    fileprivate func finishAll() -> [Work] {
        let (leftover, subs) = shared.withLock { s -> ([Work], [Subscription]) in
            s.closed = true
            let q = s.queue
            s.queue = []
            let subs = Array(s.subscriptions.values)
            s.subscriptions = [:]
            close_fd(wakeFD)
            return (q, subs)
        }
        for sub in subs { sub.continuation.finish() }
        incomingContinuation.finish()
        return leftover
    }
}

private func close_fd(_ fd: Int32) { _ = Foundation.close(fd) }

/// State confined to the loop thread: pending replies and the disconnect flag.
/// Marked Sendable only to be handed to the thread that owns it.
final class LoopContext: @unchecked Sendable {
    let core: ConnectionCore
    struct Pending {
        var handler: ReplyHandler
        var deadline: UInt64
    }
    var pending: [UInt32: Pending] = [:]
    var disconnected = false
    let responder: ConnectionCore.ImmediateResponder?
    /// Incoming calls handed to `incomingCalls` and not answered yet.
    var callsInFlight = 0
    /// The same, by sender: while a sender has any, nothing of its own is answered at once, so no answer overtakes
    /// an earlier call's; other senders' reads are answered at once all the same (a long call never holds them).
    var inFlightBySender: [String: Int] = [:]
    /// After `closeAfterReplies`: the answers still awaited before closing, and the time to close anyway.
    var closeAfter: (answers: Int, deadline: UInt64)?

    init(core: ConnectionCore, responder: ConnectionCore.ImmediateResponder?) {
        self.core = core
        self.responder = responder
    }

    func run() {
        let conn = core.connection
        let coreData = Unmanaged.passUnretained(core).toOpaque()
        let contextData = Unmanaged.passUnretained(self).toOpaque()
        _ = dbus_connection_set_watch_functions(conn, cAddWatch, cRemoveWatch, cToggleWatch, coreData, nil)
        _ = dbus_connection_set_timeout_functions(conn, cAddTimeout, cRemoveTimeout, cToggleTimeout, coreData, nil)
        dbus_connection_set_wakeup_main_function(conn, cWakeup, coreData, nil)
        dbus_connection_set_dispatch_status_function(conn, cDispatchStatus, coreData, nil)
        _ = dbus_connection_add_filter(conn, cFilter, contextData, nil)

        var closeRequested = false
        var fds: [pollfd] = []
        var active: [OpaquePointer] = []
        while true {
            core.drainWake()
            let work = core.shared.withLock { s -> [ConnectionCore.Work] in
                let q = s.queue
                s.queue = []
                return q
            }
            for w in work { process(w, &closeRequested) }
            while dbus_connection_get_dispatch_status(conn) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(conn)
            }
            if closeRequested || disconnected || dbus_connection_get_is_connected(conn) == 0 { break }

            // Build the poll set from the enabled watches.
            let (watches, timeouts) = core.shared.withLock { ($0.watches, $0.timeouts) }
            fds.removeAll(keepingCapacity: true)
            active.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: core.wakeFD, events: Int16(POLLIN), revents: 0))
            for bits in watches {
                guard let w = OpaquePointer(bitPattern: bits), dbus_watch_get_enabled(w) != 0 else { continue }
                let flags = dbus_watch_get_flags(w)
                var events: Int16 = 0
                if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
                if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: dbus_watch_get_unix_fd(w), events: events, revents: 0))
                active.append(w)
            }
            var deadline = UInt64.max
            for (_, d) in timeouts { deadline = min(deadline, d) }
            for (_, p) in pending { deadline = min(deadline, p.deadline) }
            if let closeAfter { deadline = min(deadline, closeAfter.deadline) }
            let now = ConnectionCore.now()
            let timeoutMs: Int32
            if deadline == .max { timeoutMs = -1 }
            else if deadline <= now { timeoutMs = 0 }
            else { timeoutMs = Int32(clamping: (deadline - now + 999_999) / 1_000_000) }

            let r = poll(&fds, nfds_t(fds.count), timeoutMs)
            if r < 0 && errno != EINTR { break }

            if r > 0 {
                for (i, w) in active.enumerated() {
                    let revents = fds[i + 1].revents
                    guard revents != 0 else { continue }
                    // A watch may have been removed while handling an earlier one.
                    let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(w)))
                    guard core.shared.withLock({ $0.watches.contains(bits) }) else { continue }
                    var flags: UInt32 = 0
                    if revents & Int16(POLLIN) != 0 { flags |= CDBUS_WATCH_READABLE }
                    if revents & Int16(POLLOUT) != 0 { flags |= CDBUS_WATCH_WRITABLE }
                    if revents & Int16(POLLERR) != 0 { flags |= CDBUS_WATCH_ERROR }
                    if revents & Int16(POLLHUP) != 0 { flags |= CDBUS_WATCH_HANGUP }
                    if revents & Int16(POLLNVAL) != 0 { flags |= CDBUS_WATCH_ERROR }
                    _ = dbus_watch_handle(w, flags)
                }
            }

            // libdbus timeouts and our own reply deadlines.
            let later = ConnectionCore.now()
            let expired = core.shared.withLock { s -> [UInt] in
                s.timeouts.filter { $0.value <= later }.map(\.key)
            }
            for bits in expired {
                guard let t = OpaquePointer(bitPattern: bits) else { continue }
                let still = core.shared.withLock { s -> Bool in
                    guard s.timeouts[bits] != nil else { return false }
                    s.timeouts[bits] = later + UInt64(max(dbus_timeout_get_interval(t), 0)) * 1_000_000
                    return true
                }
                if still { _ = dbus_timeout_handle(t) }
            }
            if let closeAfter, closeAfter.deadline <= later { closeRequested = true }
            let late = pending.filter { $0.value.deadline <= later }
            for (serial, p) in late.sorted(by: { $0.key < $1.key }) {
                pending[serial] = nil
                p.handler(.failure(.noReply("no reply within the timeout")))
            }
        }

        // Shut down: send what was queued before close, then close.
        if dbus_connection_get_is_connected(conn) != 0 {
            let work = core.shared.withLock { s -> [ConnectionCore.Work] in
                let q = s.queue
                s.queue = []
                return q
            }
            for w in work { process(w, &closeRequested) }
            dbus_connection_flush(conn)
        }
        let leftover = core.finishAll()
        for case .send(_, let handler?, _) in leftover {
            handler(.failure(.disconnected("the connection is closed")))
        }
        for (_, p) in pending.sorted(by: { $0.key < $1.key }) {
            p.handler(.failure(.disconnected("the connection was closed before a reply came")))
        }
        pending = [:]
        dbus_connection_remove_filter(conn, cFilter, contextData)
        dbus_connection_close(conn)
        dbus_connection_unref(conn)
    }

    private func process(_ work: ConnectionCore.Work, _ closeRequested: inout Bool) {
        switch work {
        case .close:
            closeRequested = true
        case .closeAfterReplies:
            // Replies come in call order, so the next `callsInFlight` replies answer every call handed over so far.
            if callsInFlight == 0 { closeRequested = true }
            else if closeAfter == nil { closeAfter = (callsInFlight, ConnectionCore.now() &+ ConnectionCore.replyGrace) }
        case .reply(let box, let sender):
            callsInFlight -= 1
            if let n = inFlightBySender[sender] { inFlightBySender[sender] = n > 1 ? n - 1 : nil }
            if let box, !closeRequested, !disconnected { _ = dbus_connection_send(core.connection, box.message, nil) }
            if let awaited = closeAfter?.answers {
                if awaited <= 1 { closeRequested = true } else { closeAfter?.answers = awaited - 1 }
            }
        case .send(let box, let handler, let timeout):
            if closeRequested || disconnected {
                handler?(.failure(.disconnected("the connection is closed")))
                return
            }
            var serial: UInt32 = 0
            guard dbus_connection_send(core.connection, box.message, &serial) != 0 else {
                handler?(.failure(.noMemory("out of memory")))
                return
            }
            if let handler {
                pending[serial] = Pending(handler: handler, deadline: ConnectionCore.now() &+ timeout)
            }
        }
    }

    /// Writes the answer to a call taken on the loop thread.
    private func send(_ result: Result<[DBusValue], DBusError>, to call: IncomingCall) {
        guard !call.noReply, let box = MessageBox.reply(to: call, result) else { return }
        _ = dbus_connection_send(core.connection, box.message, nil)
    }

    /// Called by libdbus during dispatch, on the loop thread.
    fileprivate func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        let h = MessageHeader(message)
        switch h.type {
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN:
            guard let p = pending.removeValue(forKey: h.replySerial) else { return DBUS_HANDLER_RESULT_HANDLED }
            do { p.handler(.success(try Marshal.read(message))) }
            catch let e as DBusError { p.handler(.failure(.invalidArgs("cannot decode the reply: \(e.message)"))) }
            catch { p.handler(.failure(.failed("\(error)"))) }
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_ERROR:
            guard let p = pending.removeValue(forKey: h.replySerial) else { return DBUS_HANDLER_RESULT_HANDLED }
            let text = ((try? Marshal.read(message))?.first?.stringValue) ?? ""
            p.handler(.failure(DBusError(name: h.errorName ?? "org.freedesktop.DBus.Error.Failed", message: text)))
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            if h.interface == "org.freedesktop.DBus.Local" && h.member == "Disconnected" {
                disconnected = true
                return DBUS_HANDLER_RESULT_HANDLED
            }
            guard let args = try? Marshal.read(message) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            core.deliver(DBusSignal(sender: h.sender, path: h.path ?? "", interface: h.interface ?? "",
                                    member: h.member ?? "", arguments: args))
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            let args: Result<[DBusValue], DBusError>
            do { args = .success(try Marshal.read(message)) }
            catch let e as DBusError { args = .failure(e) }
            catch { args = .failure(.invalidArgs("\(error)")) }
            let call = IncomingCall(
                serial: h.serial, sender: h.sender, path: h.path ?? "/", interface: h.interface,
                member: h.member ?? "", signature: h.signature, arguments: args, noReply: h.noReply)
            // A property read (or a quick command) answered here skips two thread hops (to a task and back).
            if inFlightBySender[call.sender] == nil, let responder {
                if let values = responder.reads(call) {
                    send(.success(values), to: call)
                    return DBUS_HANDLER_RESULT_HANDLED
                }
                if core.callsBeingHandled.load(ordering: .acquiring) == 0 {
                    // An answer sent before the command is done is written at once; then this thread steps aside.
                    // The bus daemon, which woke it with the call, was preempted by it on this CPU: it can carry the
                    // answer on only once this thread sleeps or yields, and the command's own work after the answer
                    // (its signals built and sent) delayed the caller's reply by as long (~200 µs of a PlayPause).
                    let reply = CallAnswer { [self] in
                        send($0, to: call)
                        sched_yield()
                    }
                    if let result = DBusCurrentCall.$answer.withValue(reply, operation: { responder.commands(call) }) {
                        reply(result)
                        return DBUS_HANDLER_RESULT_HANDLED
                    }
                }
            }
            callsInFlight += 1
            inFlightBySender[call.sender, default: 0] += 1
            core.callsBeingHandled.add(1, ordering: .relaxed)
            core.incomingContinuation.yield(call)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }
}

// MARK: - C callbacks (the only ones in the module)

private func core(_ data: UnsafeMutableRawPointer?) -> ConnectionCore {
    Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue()
}

private func bits(_ p: OpaquePointer?) -> UInt { UInt(bitPattern: Int(bitPattern: p.map { UnsafeRawPointer($0) })) }

private let cAddWatch: DBusAddWatchFunction = { watch, data in
    let c = core(data)
    c.shared.withLock { _ = $0.watches.insert(bits(watch)) }
    c.wake()
    return 1
}
private let cRemoveWatch: DBusRemoveWatchFunction = { watch, data in
    let c = core(data)
    c.shared.withLock { _ = $0.watches.remove(bits(watch)) }
    c.wake()
}
private let cToggleWatch: DBusWatchToggledFunction = { _, data in
    core(data).wake()
}
private let cAddTimeout: DBusAddTimeoutFunction = { timeout, data in
    let c = core(data)
    let enabled = dbus_timeout_get_enabled(timeout) != 0
    let deadline = ConnectionCore.now() + UInt64(max(dbus_timeout_get_interval(timeout), 0)) * 1_000_000
    c.shared.withLock { s in s.timeouts[bits(timeout)] = enabled ? deadline : nil }
    c.wake()
    return 1
}
private let cRemoveTimeout: DBusRemoveTimeoutFunction = { timeout, data in
    let c = core(data)
    c.shared.withLock { _ = $0.timeouts.removeValue(forKey: bits(timeout)) }
    c.wake()
}
private let cToggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    let c = core(data)
    let enabled = dbus_timeout_get_enabled(timeout) != 0
    let deadline = ConnectionCore.now() + UInt64(max(dbus_timeout_get_interval(timeout), 0)) * 1_000_000
    c.shared.withLock { s in s.timeouts[bits(timeout)] = enabled ? deadline : nil }
    c.wake()
}
private let cWakeup: DBusWakeupMainFunction = { data in core(data).wakeForLibdbus() }
private let cDispatchStatus: DBusDispatchStatusFunction = { _, status, data in
    if status == DBUS_DISPATCH_DATA_REMAINS { core(data).wakeForLibdbus() }
}
private let cFilter: DBusHandleMessageFunction = { _, message, data in
    guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return Unmanaged<LoopContext>.fromOpaque(data!).takeUnretainedValue().handle(message)
}

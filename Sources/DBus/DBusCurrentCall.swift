import Synchronization

/// The method call a handler is running for, so that a command can be answered as soon as it is taken rather than
/// when its handler returns (what follows the taking, a pipeline's state change starting, then no longer delays it).
public enum DBusCurrentCall {
    // A class, not a closure: Swift 6.3's IRGen crashed (signal 11, release build) on a task-local of function type.
    @TaskLocal static var answer: CallAnswer?

    /// Sends the call's reply (no values) now; what the handler returns or throws afterwards is dropped. For methods
    /// without out-arguments whose effect is already published, and only once nothing after can fail. Works in `call`
    /// and in `callAtOnce` (there the reply is written before the method goes on). Outside a handler, or a second
    /// time, it does nothing.
    public static func answerNow() { answer?(.success([])) }
}

/// Answers a call once: early (`DBusCurrentCall.answerNow`) or with the handler's result, whichever comes first.
final class CallAnswer: Sendable {
    private let answered = Atomic<Bool>(false)
    private let send: @Sendable (Result<[DBusValue], DBusError>) -> Void

    init(_ send: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) { self.send = send }

    func callAsFunction(_ result: Result<[DBusValue], DBusError>) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        send(result)
    }

    /// Has `objects` handle `call` with `DBusCurrentCall.answerNow` answering it, then answers with the result.
    func handle(_ call: IncomingCall, by objects: ObjectTree) async {
        let result = await DBusCurrentCall.$answer.withValue(self) { await objects.handle(call) }
        self(result)
    }
}

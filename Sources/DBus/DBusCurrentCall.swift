import Synchronization

/// The method call a handler is running for, so that a command can be answered as soon as it is taken rather than
/// when its handler returns (what follows the taking, a pipeline's state change starting, then no longer delays it).
public enum DBusCurrentCall {
    @TaskLocal static var answerEarly: (@Sendable () -> Void)?

    /// Sends the call's reply (no values) now; what the handler returns or throws afterwards is dropped. For methods
    /// without out-arguments whose effect is already published, and only once nothing after can fail. Outside a
    /// handler, or a second time, it does nothing.
    public static func answerNow() { answerEarly?() }
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

    /// Runs `handle` with `DBusCurrentCall.answerNow` answering this call, then answers with its result.
    func run(_ handle: @Sendable () async -> Result<[DBusValue], DBusError>) async {
        let result = await DBusCurrentCall.$answerEarly.withValue({ [self] in self(.success([])) }) { await handle() }
        self(result)
    }
}

import DBus

/// The network buffer's fill level (org.tonearm.Player1 `Buffering` and `BufferingChanged`), for `status`.
extension PlayerClient {
    /// The fill level now, 0…100 (100 when not buffering, or from a daemon that does not say).
    func buffering() async -> Int {
        let value = try? await connection.getProperty(destination: Self.busName, path: Self.objectPath,
                                                     interface: Interface.tonearm, name: "Buffering")
        return value?.looseInt64.map { Int($0) } ?? 100
    }

    /// Each change of the fill level, with the track it is of.
    func bufferingChanges() -> AsyncStream<(trackId: String, percent: Int)> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Self.busName, path: Self.objectPath, interface: Interface.tonearm, member: "BufferingChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    guard signal.arguments.count >= 2, let percent = signal.arguments[1].unwrapped.looseInt64 else { continue }
                    continuation.yield((signal.arguments[0].unwrapped.looseString ?? "", Int(percent)))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

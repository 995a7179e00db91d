/// Lets the face that sent a transport command answer its caller as soon as the Player has published the command's
/// effect, before the work that follows it (the engine's state change starting, the save scheduled): any read made
/// after that answer already shows the change.
public enum CommandTaken {
    /// Called once the command's new state is published; set by a face around its call into the Player.
    @TaskLocal public static var notify: (@Sendable () -> Void)?

    /// Runs `command` with `answer` called as soon as its effect is published (or never, if it publishes none: the
    /// face then answers when the command returns).
    public static func answering<T: Sendable>(_ answer: @escaping @Sendable () -> Void, _ command: () async throws -> T)
        async rethrows -> T {
        try await $notify.withValue(answer) { try await command() }
    }
}

/// Lets the face that sent a transport command answer its caller as soon as the Player has published the command's
/// effect, before the work that follows it (the engine's state change starting, the save scheduled): any read made
/// after that answer already shows the change.
public final class CommandTaken: Sendable {
    /// The command being run for a face, if any; the Player calls it once the new state is published.
    // A class, not a closure: Swift 6.3's IRGen crashed (signal 11, release build) on a task-local of function type.
    @TaskLocal static var current: CommandTaken?

    private let answer: @Sendable () -> Void

    private init(_ answer: @escaping @Sendable () -> Void) { self.answer = answer }

    /// Called by the Player once the command's effect is readable, before the listeners hear of it.
    static func published() { current?.answer() }

    /// Runs `command` with `answer` called as soon as its effect is published (or never, if it publishes none: the
    /// face then answers when the command returns).
    public static func answering(_ answer: @escaping @Sendable () -> Void, _ command: () async -> Void) async {
        await $current.withValue(CommandTaken(answer)) { await command() }
    }

    /// The same for a command run in place, outside any task (`Player.takeAtOnce` on a face's thread).
    public static func answering<T>(_ answer: @escaping @Sendable () -> Void, _ command: () -> T) -> T {
        $current.withValue(CommandTaken(answer)) { command() }
    }
}

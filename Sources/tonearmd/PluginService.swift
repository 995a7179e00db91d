import Logging
import ServiceLifecycle
import TonearmCore

/// A source plugin started with its context in its turn and stopped at shutdown. A plugin that cannot start (a
/// LocalSend port taken, a library folder gone) is logged, and the player runs on without it.
struct PluginService<Plugin: SourcePlugin>: DaemonService {
    let plugin: Plugin
    let context: PluginContext
    /// What the log calls the plugin when it cannot start.
    let title: String
    let turn: StartTurn
    let logger: Logger

    var description: String { turn.name }

    func run() async {
        guard await turn.start({
            do { try await plugin.start(context) } catch { logger.error("\(title): \(error)") }
        }) else { return }
        try? await gracefulShutdown()
        await turn.stop { await plugin.stop() }
    }
}

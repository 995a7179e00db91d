import ServiceLifecycle

/// glibc keeps memory freed after big messages (a 100,000-element array, a 1 MB string) in its arenas; a daemon that
/// runs for weeks hands it back every ten seconds instead of keeping its high-water mark.
struct MemoryTrimmer: DaemonService {
    let turn: StartTurn

    var description: String { turn.name }

    func run() async {
        guard await turn.start() else { return }
        await cancelWhenGracefulShutdown {
            while true {
                do { try await Task.sleep(for: .seconds(10)) } catch { return }
                _ = malloc_trim(0)
            }
        }
        await turn.stop()
    }
}

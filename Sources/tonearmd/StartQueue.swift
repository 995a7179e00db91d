import DBus
import Logging
import MPRIS
import Synchronization
import TonearmCore

/// What the player starts with: the saved queue, or the command line's files in its place (keeping loop, shuffle,
/// volume and the rest). The saved state is restored as soon as the player has started, so that property reads are
/// answered from it while the plugins start; the files, which their sources check, are queued once the plugins run.
final class StartQueue: Sendable {
    let player: Player
    let saved: PersistedState?
    /// The command line's files and URIs.
    let files: [String]
    let logger: Logger
    private let restored = Atomic<Bool>(false)

    init(player: Player, saved: PersistedState?, files: [String], logger: Logger) {
        self.player = player
        self.saved = saved
        self.files = files
        self.logger = logger
    }

    /// Restores the saved state now, unless a queued track's rendition must be made again by its source (then
    /// `finish` does it once the sources run); then lets `connection` answer the state's reads while other calls
    /// stay held.
    func restoreEarly(answeringReadsOn connection: DBusConnection) async {
        if var saved {
            if files.isEmpty && saved.hasMissingRenditions { return }
            if !files.isEmpty { saved.queue.clear() }
            await player.restore(saved)
        }
        restored.store(true, ordering: .releasing)
        connection.answerReadsWhileHeld(MPRISService.stateInterfaces)
    }

    /// What is left once the sources run: the saved state if it waited for them, the command line's files queued
    /// in place of the saved queue and the first one made current.
    func finish() async {
        if !restored.load(ordering: .acquiring), var saved {
            if !files.isEmpty { saved.queue.clear() }
            await player.restore(saved)
        }
        guard !files.isEmpty else { return }
        let uris = files.map(Tonearmd.uri(for:))
        let (ids, errors) = await player.addSkippingBad(uris, at: .end, replacing: true)
        for error in errors { logger.error("\(error.message)") }
        if let first = ids.first { await player.goTo(first) }
    }
}

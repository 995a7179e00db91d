import DBus
import Logging
import MPRIS
import Synchronization
import TonearmCore

/// What the player starts with: the saved queue, or the command line's files in its place (keeping loop, shuffle,
/// volume and the rest). Both come before any service starts, so that property reads are answered from them at once:
/// the saved state as soon as the player has started, the files as soon as their tags are read. Only a saved queue
/// whose renditions a source must make again waits for the sources (`finish`).
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

    /// Whether the saved state (or nothing) is in place, so that every call may be taken; false while a saved queue
    /// waits for its sources (`finish`).
    var isRestored: Bool { restored.load(ordering: .acquiring) }

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

    /// Queues the command line's files in place of the saved queue and makes the first one current: each is checked
    /// and its tags read now, before the sources start (no source needs to have started to resolve a file).
    func queueFiles() async {
        guard !files.isEmpty else { return }
        let uris = files.map(Tonearmd.uri(for:))
        let (ids, errors) = await player.addSkippingBad(uris, at: .end, replacing: true)
        for error in errors { logger.error("\(error.message)") }
        if let first = ids.first { await player.goTo(first) }
    }

    /// Skips the command line's broken files by their bytes while the engine is being built (not awaited: nothing
    /// waits for it, and a good first file, its tags read, is not checked at all).
    func checkFiles() {
        guard !files.isEmpty else { return }
        Task { [player] in await player.checkDoubtfulLoadedFiles() }
    }

    /// What is left once the sources run: the saved state, if it waited for them (only without files: files replace
    /// its queue, so `restoreEarly` restored the rest at once).
    func finish() async {
        guard !isRestored, let saved else { return }
        await player.restore(saved)
    }
}

import Foundation
import Lyrics

/// Finds the lyrics of a track (the daemon wires the sources in order); called off the player's path.
public typealias LyricsFinder = @Sendable (TrackMetadata) async -> Lyrics?

/// The lyrics of the current track and the line being sung, as its `LyricsFollower` decides. The lookup runs in a
/// task of its own, so a track starts (and calls are answered) without waiting for it; lyrics that come later are
/// announced when they come.
extension Player {
    /// The current track's lyrics, once found.
    public var currentLyrics: Lyrics? { lyricsFollower.lyrics(of: queue.currentID) }

    /// The index of the current line in `currentLyrics` (nil before the first line, with untimed lyrics or none).
    public var currentLyricsLine: Int? {
        guard let lyrics = currentLyrics else { return nil }
        return lyrics.lineIndex(at: position())
    }

    /// Starts a lookup when the current track is not the one the lyrics are for (called on every publish).
    func followLyricsTrack() {
        let id = queue.currentID
        // Every publication comes here: looking the track up only when it changed.
        guard id != lyricsFollower.trackID else { return }
        perform(lyricsFollower.current(id, canLookUp: lyricsFinder != nil && id.flatMap { queue.track($0) } != nil))
    }

    /// Announces the line at the position now and, while playing, sets a timer for the next line's start.
    func followLyrics() {
        guard lyricsFollower.trackID == queue.currentID else { return perform([.cancelTimer]) }
        perform(lyricsFollower.follow(position: position(), playing: status == .playing, rate: engine.snapshot.rate))
    }

    private func perform(_ actions: [LyricsFollower.Action]) {
        for action in actions {
            switch action {
            case .lookUp(let id):
                guard let finder = lyricsFinder, let metadata = queue.track(id)?.metadata else { continue }
                lyricsTasks.lookup?.cancel()
                lyricsTasks.lookup = Task.detached(priority: .utility) { [weak self] in
                    let lyrics = await finder(metadata)
                    guard !Task.isCancelled else { return }
                    await self?.lyricsFound(id, lyrics)
                }
            case .cancelLookup:
                lyricsTasks.lookup?.cancel()
                lyricsTasks.lookup = nil
            case .lyricsChanged(let id, let lyrics):
                emitWithState(.lyricsChanged(id, lyrics))
            case .lineChanged(let id, let index, let start, let text):
                emitWithState(.lyricsLineChanged(id, index: index, start: start, text: text))
            case .schedule(let generation, let microseconds):
                lyricsTasks.timer?.cancel()
                lyricsTasks.timer = Task { [weak self] in
                    try? await Task.sleep(for: .microseconds(microseconds))
                    guard !Task.isCancelled else { return }
                    await self?.lyricsTimerFired(generation)
                }
            case .cancelTimer:
                lyricsTasks.timer?.cancel()
                lyricsTasks.timer = nil
            }
        }
    }

    private func lyricsFound(_ id: TrackID, _ lyrics: Lyrics?) {
        guard !isShutDown else { return }
        lyricsTasks.lookup = nil
        let actions = lyricsFollower.found(id, lyrics)
        guard !actions.isEmpty, let lyrics else { return }
        logger.debug("lyrics for \(id): \(lyrics.lines.count) lines from \(lyrics.source.rawValue)\(lyrics.isSynced ? ", timed" : "")")
        perform(actions)
        publish() // xesam:asText
        followLyrics()
    }

    private func lyricsTimerFired(_ generation: Int) {
        guard lyricsFollower.isCurrent(timer: generation) else { return }
        followLyrics()
    }

    func stopFollowingLyrics() {
        lyricsTasks.lookup?.cancel()
        lyricsTasks.timer?.cancel()
    }
}

/// The tasks the player runs for its `LyricsFollower`.
struct LyricsTasks {
    var lookup: Task<Void, Never>?
    var timer: Task<Void, Never>?
}

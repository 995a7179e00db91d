import Foundation
import Lyrics

/// Finds the lyrics of a track (the daemon wires the sources in order); called off the player's path.
public typealias LyricsFinder = @Sendable (TrackMetadata) async -> Lyrics?

/// What the player knows of the current track's lyrics and which line it last announced.
struct LyricsFollow {
    /// The track the lyrics below belong to (looked up, or being looked up).
    var trackID: TrackID?
    var lyrics: Lyrics?
    /// `lyrics?.plainText`, kept so a snapshot does not rebuild it.
    var text: String?
    var lookup: Task<Void, Never>?
    var timer: Task<Void, Never>?
    var timerGeneration = 0
    /// The line last announced, with its track: a change of either is news.
    var announced: (track: TrackID?, index: Int?) = (nil, nil)
    /// The line announced last, for the published state.
    var line: LyricsLine?
}

/// The lyrics of the current track, and the line being sung, announced when it changes: at the start of each line
/// (a timer set for the next line's start, read against the same position as Tick), right after a seek, and when
/// the track changes. The lookup runs in a task of its own, so a track starts (and calls are answered) without
/// waiting for it; lyrics that come later are announced when they come.
extension Player {
    /// The current track's lyrics, once found.
    public var currentLyrics: Lyrics? {
        guard let id = queue.currentID, lyricsFollow.trackID == id else { return nil }
        return lyricsFollow.lyrics
    }

    /// The index of the current line in `currentLyrics` (nil before the first line, with untimed lyrics or none).
    public var currentLyricsLine: Int? {
        guard let lyrics = currentLyrics else { return nil }
        return lyrics.lineIndex(at: position())
    }

    /// Starts a lookup when the current track is not the one the lyrics are for (called on every publish).
    func followLyricsTrack() {
        let id = queue.currentID
        guard id != lyricsFollow.trackID else { return }
        lyricsFollow.lookup?.cancel()
        lyricsFollow.timer?.cancel()
        let hadLyrics = lyricsFollow.lyrics != nil
        lyricsFollow.trackID = id
        lyricsFollow.lyrics = nil
        lyricsFollow.text = nil
        if hadLyrics { emitWithState(.lyricsChanged(id, nil)) }
        announceLyricsLine(nil)
        guard let id, let finder = lyricsFinder, let metadata = queue.track(id)?.metadata else { return }
        lyricsFollow.lookup = Task.detached(priority: .utility) { [weak self] in
            let lyrics = await finder(metadata)
            guard !Task.isCancelled else { return }
            await self?.lyricsFound(id, lyrics)
        }
    }

    private func lyricsFound(_ id: TrackID, _ lyrics: Lyrics?) {
        guard lyricsFollow.trackID == id, !isShutDown else { return }
        lyricsFollow.lookup = nil
        guard let lyrics, !lyrics.isEmpty else { return }
        lyricsFollow.lyrics = lyrics
        lyricsFollow.text = lyrics.plainText
        logger.debug("lyrics for \(id): \(lyrics.lines.count) lines from \(lyrics.source.rawValue)\(lyrics.isSynced ? ", timed" : "")")
        emitWithState(.lyricsChanged(id, lyrics))
        publish() // xesam:asText
        followLyrics()
    }

    /// Announces the line at the position now and, while playing, sets a timer for the next line's start.
    func followLyrics() {
        lyricsFollow.timer?.cancel()
        lyricsFollow.timer = nil
        guard let lyrics = currentLyrics, lyrics.isSynced else { return }
        let position = position()
        announceLyricsLine(lyrics.lineIndex(at: position))
        guard status == .playing, let next = lyrics.nextChange(after: position) else { return }
        lyricsFollow.timerGeneration += 1
        let generation = lyricsFollow.timerGeneration
        // The position runs at the playback rate; at least a millisecond, so a position that lags the clock a little
        // is read again shortly rather than in a tight loop.
        let wait = max(1_000, Int64(Double(next - position) / max(engine.snapshot.rate, 0.01)))
        lyricsFollow.timer = Task { [weak self] in
            try? await Task.sleep(for: .microseconds(wait))
            guard !Task.isCancelled else { return }
            await self?.lyricsTimerFired(generation)
        }
    }

    private func lyricsTimerFired(_ generation: Int) {
        guard generation == lyricsFollow.timerGeneration else { return }
        followLyrics()
    }

    private func announceLyricsLine(_ index: Int?) {
        let track = lyricsFollow.trackID
        guard lyricsFollow.announced.track != track || lyricsFollow.announced.index != index else { return }
        lyricsFollow.announced = (track, index)
        let line = index.flatMap { lyricsFollow.lyrics?.lines[$0] }
        lyricsFollow.line = line.map { LyricsLine(index: index ?? -1, start: $0.start ?? -1, text: $0.text) }
        guard let track else { return }
        emitWithState(.lyricsLineChanged(track, index: index ?? -1, start: line?.start ?? -1, text: line?.text ?? ""))
    }

    func stopFollowingLyrics() {
        lyricsFollow.lookup?.cancel()
        lyricsFollow.timer?.cancel()
    }
}

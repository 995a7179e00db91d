import Lyrics

/// The current track's lyrics and the line being sung: looked up when the track changes, the line announced at the
/// start of each line (a timer set for the next line's start), right after a seek, and when the track changes. A
/// plain value: the player tells it the track, the lyrics found and the position, and performs what it returns (the
/// lookup and the timer are the player's tasks).
struct LyricsFollower: Sendable {
    enum Action: Sendable {
        /// Look up the lyrics of `track` (any earlier lookup is dropped); report with `found`.
        case lookUp(TrackID)
        case cancelLookup
        /// The lyrics of `track` changed (nil: none, or not found yet).
        case lyricsChanged(TrackID?, Lyrics?)
        /// A new line is sung (index -1: none).
        case lineChanged(TrackID, index: Int, start: Int64, text: String)
        /// Call `timerFired(generation)` after `microseconds` (replacing a timer that waits).
        case schedule(generation: Int, microseconds: Int64)
        case cancelTimer
    }

    /// The track the lyrics below belong to (looked up, or being looked up).
    private(set) var trackID: TrackID?
    private(set) var lyrics: Lyrics?
    /// `lyrics?.plainText`, kept so a snapshot does not rebuild it.
    private(set) var text: String?
    /// The line announced last, for the published state.
    private(set) var line: LyricsLine?
    private var announced: (track: TrackID?, index: Int?) = (nil, nil)
    private var timerGeneration = 0

    /// The lyrics of `id`, once found.
    func lyrics(of id: TrackID?) -> Lyrics? { id != nil && id == trackID ? lyrics : nil }

    /// The current track is `id`: a new one drops the old lyrics and, when `canLookUp`, looks its own up.
    mutating func current(_ id: TrackID?, canLookUp: Bool) -> [Action] {
        guard id != trackID else { return [] }
        var actions: [Action] = [.cancelLookup, .cancelTimer]
        let hadLyrics = lyrics != nil
        trackID = id
        lyrics = nil
        text = nil
        if hadLyrics { actions.append(.lyricsChanged(id, nil)) }
        actions += announce(nil)
        if let id, canLookUp { actions.append(.lookUp(id)) }
        return actions
    }

    /// A lookup for `id` ended; lyrics for a track no longer current are dropped.
    mutating func found(_ id: TrackID, _ found: Lyrics?) -> [Action] {
        guard trackID == id, let found, !found.isEmpty else { return [] }
        lyrics = found
        text = found.plainText
        return [.lyricsChanged(id, found)]
    }

    /// Announces the line at `position` (µs) and, while playing, sets a timer for the next line's start; the position
    /// runs at `rate`. The position is read only for synced lyrics: it is a query of the pipeline, made after every
    /// Play and Pause.
    mutating func follow(position readPosition: @autoclosure () -> Int64, playing: Bool, rate: Double) -> [Action] {
        var actions: [Action] = [.cancelTimer]
        guard let lyrics, lyrics.isSynced else { return actions }
        let position = readPosition()
        actions += announce(lyrics.lineIndex(at: position))
        guard playing, let next = lyrics.nextChange(after: position) else { return actions }
        timerGeneration += 1
        // At least a millisecond, so a position that lags the clock a little is read again shortly rather than in a
        // tight loop.
        let wait = max(1_000, Int64(Double(next - position) / max(rate, 0.01)))
        return actions + [.schedule(generation: timerGeneration, microseconds: wait)]
    }

    /// Whether a timer that fired is the latest (then the player follows again).
    func isCurrent(timer generation: Int) -> Bool { generation == timerGeneration }

    private mutating func announce(_ index: Int?) -> [Action] {
        guard announced.track != trackID || announced.index != index else { return [] }
        announced = (trackID, index)
        let sung = index.flatMap { lyrics?.lines[$0] }
        line = sung.map { LyricsLine(index: index ?? -1, start: $0.start ?? -1, text: $0.text) }
        guard let trackID else { return [] }
        return [.lineChanged(trackID, index: index ?? -1, start: sung?.start ?? -1, text: sung?.text ?? "")]
    }
}

import Foundation
import Playback

/// A write to the listening history, done in order off the actor.
enum HistoryWork: Sendable {
    case listen(TrackID, Listen)
    case skip(TrackID, uri: String)
    /// Reads a track's stats into its metadata (when it starts to be heard).
    case refresh(TrackID, uri: String)
}

/// Listening history: the PlayCounter decides what counts, the history store keeps it, and the stats come back into
/// the track's metadata (MPRIS xesam:useCount and the rest). The counter runs with or without a history: what starts
/// to be heard and every listen that counts also go out on the event fan-out (`nowPlaying`, `listened`), for a
/// scrobbler.
extension Player {
    func startHistory() {
        guard let history else { return }
        let (work, sink) = AsyncStream.makeStream(of: HistoryWork.self)
        historyQueue = sink
        let logger = logger
        tasks.append(Task { [weak self] in
            for await item in work {
                do {
                    switch item {
                    case .listen(let id, let listen):
                        let stats = try await history.recordListen(listen)
                        logger.info("listened to \(listen.title ?? listen.uri) (\(Int(listen.heard)) s heard; \(stats.playCount) plays)")
                        await self?.applyStats(id, uri: listen.uri, stats)
                    case .skip(let id, let uri):
                        await self?.applyStats(id, uri: uri, try await history.recordSkip(uri: uri, at: Date()))
                    case .refresh(let id, let uri):
                        if let stats = try await history.stats(uri: uri) { await self?.applyStats(id, uri: uri, stats) }
                    }
                } catch {
                    logger.warning("listening history: \(error)")
                }
            }
        })
    }

    /// Whether what plays is being heard now (not paused, buffering or waiting for the pipeline).
    var isBeingHeard: Bool { isHeard(engine.pipelineState) }

    /// Whether what plays is heard while the pipeline is in `pipeline`.
    func isHeard(_ pipeline: PlaybackState) -> Bool { status == .playing && pipeline == .playing && reconnector.level >= 100 }

    /// The engine reported, at `now`, what the pipeline does (`pipeline`): heard from then on, or no longer.
    func observeListening(_ pipeline: PlaybackState, at now: ContinuousClock.Instant) {
        if status == .stopped {
            countListening(counter.stopped(at: now))
        } else {
            countListening(counter.observe(playing: isHeard(pipeline), at: now))
        }
    }

    /// A look between the engine's reports (each publication, each tick): a stop ends the listen, a listen heard
    /// long enough counts now; whether it is heard changes only with the reports, which come with their own time.
    func checkListening() {
        if status == .stopped {
            countListening(counter.stopped(at: .now))
        } else {
            countListening(counter.checkpoint(at: .now))
        }
    }

    /// What was being heard played to its end at `now`.
    func listeningEnded(at now: ContinuousClock.Instant) {
        countListening(counter.ended(at: now))
    }

    /// A track began to be heard (at `now`, as the engine saw it).
    func listeningStarted(_ id: TrackID, at now: ContinuousClock.Instant = .now) {
        guard let track = queue.track(id) else { return }
        let live = track.metadata.isLive == true
        countListening(counter.started(id, title: live ? track.metadata.title : nil, length: live ? nil : track.metadata.length,
                                       playing: isHeard(reportedPipeline), at: now))
        if !live { historyQueue?.yield(.refresh(id, uri: track.uri)) }
        emit(.nowPlaying(id, track.metadata))
    }

    /// The length of `id` came to be known or changed: what must be heard of it follows (a file queued before its tags
    /// were read counted as a track of unknown length, 4 minutes, and a 4 s song never counted). A live stream's song
    /// keeps its own rule.
    func listeningLengthChanged(_ id: TrackID, _ metadata: TrackMetadata) {
        guard metadata.isLive != true else { return }
        countListening(counter.lengthChanged(id, to: metadata.length, at: .now))
    }

    /// The user moved on from what was being heard (Next, Previous, a pick, a new queue).
    func listeningMovedOn() {
        countListening(counter.movedOn(at: .now, playing: isBeingHeard))
    }

    /// A live stream's song changed; `before` is the metadata the song that ended was heard with (the track's own now
    /// names the new song's artist).
    func listeningTitleChanged(_ id: TrackID, _ title: String?, before: TrackMetadata) {
        let actions = counter.titleChanged(id, to: title, playing: isBeingHeard, at: .now)
        countListening(actions, endedSong: before)
        if counter.listening?.id == id, counter.listening?.title == title, let track = queue.track(id) {
            emit(.nowPlaying(id, track.metadata))
        }
    }

    private func countListening(_ actions: [PlayCounter.Action], endedSong: TrackMetadata? = nil) {
        for action in actions {
            switch action {
            case .count(let id, let title, let startedAt, let heard):
                guard let track = queue.track(id) else { continue }
                var m = track.metadata
                if let endedSong, m.isLive == true, endedSong.title == title {
                    m.artists = endedSong.artists
                    m.album = endedSong.album
                }
                let began = Date().addingTimeInterval(-Double(startedAt.duration(to: .now) / .milliseconds(1)) / 1000)
                let live = m.isLive == true
                // A live stream's song has no length of its own, and the station's ids are not the song's.
                let listen = Listen(uri: m.url, title: title ?? m.title, artists: m.artists, album: m.album, startedAt: began,
                                    heard: Double(heard / .milliseconds(1)) / 1000, isLive: live,
                                    length: live ? nil : m.length.map { Double($0) / 1_000_000 },
                                    trackNumber: live ? nil : m.trackNumber, musicBrainz: live ? nil : m.musicBrainz)
                historyQueue?.yield(.listen(id, listen))
                emit(.listened(listen))
            case .skip(let id):
                guard let track = queue.track(id), track.metadata.isLive != true else { continue }
                historyQueue?.yield(.skip(id, uri: track.uri))
            }
        }
    }

    private func applyStats(_ id: TrackID, uri: String, _ stats: TrackStats) {
        guard var metadata = queue.track(id)?.metadata, metadata.url == uri, metadata.isLive != true else { return }
        metadata.stats = stats
        applyMetadataNow(id, metadata)
    }

    /// Reads the stats of the entries playing `uri` again (after a rating set from elsewhere).
    public func refreshStats(uri: String) {
        for track in queue.tracks where track.uri == uri { historyQueue?.yield(.refresh(track.id, uri: uri)) }
    }

    /// Rates the current track (0…10 half stars; nil clears); throws when nothing plays or there is no history.
    public func rateCurrent(halfStars: Int?) async throws -> TrackStats {
        guard let history else { throw TonearmError(.failed, "listening history is off") }
        guard let current = queue.current else { throw TonearmError(.nothingPlaying, "there is no current track to rate") }
        if let halfStars, !(0...10).contains(halfStars) { throw TonearmError.invalidValue("a rating is 0 to 5 stars, in half stars") }
        let stats = try await history.setRating(uri: current.uri, halfStars: halfStars)
        applyStats(current.id, uri: current.uri, stats)
        return stats
    }
}

import Foundation
import Playback

/// The queue: adding (through the source plugins), removing, moving, and what comes next.
extension Player {
    /// The most URIs one call may hand over: a call with 100,000 bad ones would queue as many failure signals.
    public static let maximumBatch = 10_000

    /// Throws InvalidArgs for a batch larger than `maximumBatch`.
    public static func checkBatch(_ uris: [String]) throws {
        guard uris.count <= maximumBatch else {
            throw TonearmError(.invalidArgs, "at most \(maximumBatch) URIs at once, not \(uris.count)")
        }
    }

    /// MPRIS OpenUri: one file through `open` (after the current track, played now, even from Stopped); throws
    /// when it cannot be played.
    @discardableResult
    public func openURI(_ uri: String) async throws -> TrackID {
        let (ids, refused) = await open([uri])
        if let first = ids.first { return first }
        throw refused.first?.error ?? TonearmError(.unsupportedType, "cannot play \(uri)")
    }

    /// "Open with": checks each URI by content, puts the playable ones right after the current track as one batch
    /// and plays the first; each one refused is reported (TrackFailed with NoTrack) and returned with its reason.
    public func open(_ uris: [String]) async -> (ids: [TrackID], refused: [(uri: String, error: TonearmError)]) {
        engine.warmUp()
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        var refused: [(uri: String, error: TonearmError)] = []
        for uri in uris {
            do {
                for (metadata, plugin) in try await resolveExpanding(uri) {
                    do {
                        if let url = URL(string: metadata.url) { try await plugin.verify(url) }
                        resolved.append((metadata, plugin))
                    } catch {
                        let reason = error as? TonearmError ?? TonearmError(.unsupportedType, "cannot play \(metadata.url): \(error)")
                        logger.error("cannot open \(metadata.url): \(reason.message)")
                        emit(.trackFailed(.noTrack, uri: metadata.url, error: reason))
                        refused.append((metadata.url, reason))
                    }
                }
            } catch {
                let reason = error as? TonearmError ?? TonearmError(.unsupportedType, "cannot play \(uri): \(error)")
                logger.error("cannot open \(uri): \(reason.message)")
                emit(.trackFailed(.noTrack, uri: uri, error: reason))
                refused.append((uri, reason))
            }
        }
        let ids = insert(resolved, at: .afterCurrent)
        if let first = ids.first { goTo(first) }
        return (ids, refused)
    }

    public func goTo(_ id: TrackID) {
        guard queue.contains(id) else { return }
        skipper.forgive(id)
        listeningMovedOn()
        switchTo(id, keepingStatus: false)
    }

    /// Resolves URIs through the plugins and inserts them; all or nothing.
    @discardableResult
    public func add(_ uris: [String], at position: PlayQueue.Position) async throws -> [TrackID] {
        try Self.checkBatch(uris)
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        for uri in uris {
            resolved += try await resolveExpanding(uri)
        }
        return insert(resolved, at: position)
    }

    /// Like `add`, but reports and skips what cannot be resolved (for files given on a command line).
    public func addSkippingBad(_ uris: [String], at position: PlayQueue.Position, replacing: Bool) async -> (ids: [TrackID], errors: [TonearmError]) {
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        var errors: [TonearmError] = []
        for uri in uris {
            do { resolved += try await resolveExpanding(uri) } catch let e as TonearmError {
                errors.append(e)
                logger.error("skipping \(uri): \(e.message)")
                emit(.trackFailed(.noTrack, uri: uri, error: e))
            } catch {
                errors.append(TonearmError(.failed, "\(error)"))
            }
        }
        if replacing {
            return (replace(with: resolved), errors)
        }
        return (insert(resolved, at: position), errors)
    }

    /// Replaces the queue; with `play`, starts its first track.
    @discardableResult
    public func replaceQueue(_ uris: [String], play: Bool) async throws -> [TrackID] {
        try Self.checkBatch(uris)
        if play { engine.warmUp() }
        var resolved: [(TrackMetadata, any SourcePlugin)] = []
        for uri in uris {
            resolved += try await resolveExpanding(uri)
        }
        let ids = replace(with: resolved)
        if play, let first = ids.first { switchTo(first, keepingStatus: false) }
        return ids
    }

    /// Queues one URI with what its sender said of it (a cast) at `position`, or in place of the whole queue (nil).
    /// With `current` it becomes the current track in the status the player was in: playing on, paused, or stopped.
    @discardableResult
    public func add(_ uri: String, hint: TrackHint, at position: PlayQueue.Position?, current: Bool) async throws -> [TrackID] {
        let resolved = try await resolveExpanding(uri).map { (hint.applied(to: $0.0), $0.1) }
        let was = status
        let ids = position.map { insert(resolved, at: $0) } ?? replace(with: resolved)
        guard current, let first = ids.first else { return ids }
        listeningMovedOn()
        skipper.forgive(first)
        queue.setCurrent(first)
        switch was {
        case .playing: load(first, paused: false)
        case .paused: load(first, paused: true)
        case .stopped: halt()
        }
        return ids
    }

    /// MPRIS AddTrack: `after` nil or NoTrack means the front.
    public func addTrack(_ uri: String, after: TrackID?, setAsCurrent: Bool) async throws {
        let position: PlayQueue.Position
        if let after, after != .noTrack {
            guard queue.contains(after) else { throw TonearmError.noSuchTrack(after.path) }
            position = .after(after)
        } else {
            position = .front
        }
        let ids = try await add([uri], at: position)
        if setAsCurrent { goTo(ids[0]) }
    }

    public func remove(_ id: TrackID) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        let wasLoaded = loaded == id
        let wasPlaying = status == .playing
        queue.remove(id)
        skipper.forgive(id)
        emit(.trackRemoved(id))
        if wasLoaded {
            if let next = queue.currentID, wasPlaying {
                load(next, paused: false)
            } else {
                halt()
            }
        }
        changedQueueShape()
    }

    public func move(_ id: TrackID, after: TrackID?) throws {
        guard queue.contains(id) else { throw TonearmError.noSuchTrack(id.path) }
        let target = after == .noTrack ? nil : after
        if let target, !queue.contains(target) { throw TonearmError.noSuchTrack(target.path) }
        guard queue.move(id, after: target) else { return }
        emit(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
    }

    public func clear() {
        stop()
        queue.clear()
        skipper.forgiveAll()
        emit(.trackListReplaced([], current: nil))
        changedQueueShape()
    }

    // MARK: Internals

    static func url(_ uri: String) throws -> URL {
        if uri.hasPrefix("/") { return URL(fileURLWithPath: uri) }
        if let parsed = URL(string: uri), parsed.scheme != nil { return parsed }
        throw TonearmError(.invalidUri, "not a URI or absolute path: \(uri)")
    }

    /// The most playlists inside playlists followed (a station's .pls naming its .m3u); deeper ones are refused.
    static let maximumPlaylistDepth = 2

    /// One URI as queue entries: a playlist's entries, each resolved (those that cannot be are reported with
    /// TrackFailed and skipped), or the URI itself. A playlist with nothing playable is an error.
    func resolveExpanding(_ uri: String, depth: Int = 0) async throws -> [(TrackMetadata, any SourcePlugin)] {
        let url = try Self.url(uri)
        for plugin in plugins {
            guard let expansion = try await plugin.expand(url) else { continue }
            return try await resolveEntries(expansion, of: uri, depth: depth)
        }
        return [try await resolve(uri)]
    }

    /// A playlist's entries, each resolved (those that cannot be are reported with TrackFailed and skipped; playlists
    /// among them are followed down to `maximumPlaylistDepth`). A playlist with nothing playable is an error.
    func resolveEntries(_ expansion: PlaylistExpansion, of uri: String, depth: Int) async throws -> [(TrackMetadata, any SourcePlugin)] {
        var out: [(TrackMetadata, any SourcePlugin)] = []
        for (location, error) in expansion.skipped {
            logger.error("playlist \(uri): skipping \(location): \(error.message)")
            emit(.trackFailed(.noTrack, uri: location, error: error))
        }
        for entry in expansion.uris {
            do {
                guard depth < Self.maximumPlaylistDepth else {
                    out.append(try await resolve(entry))
                    continue
                }
                out += try await resolveExpanding(entry, depth: depth + 1)
            } catch {
                let reason = error as? TonearmError ?? TonearmError(.failed, "cannot play \(entry): \(error)")
                logger.error("playlist \(uri): skipping \(entry): \(reason.message)")
                emit(.trackFailed(.noTrack, uri: entry, error: reason))
            }
        }
        guard !out.isEmpty else {
            throw TonearmError(.emptyPlaylist, "the playlist \(uri) names nothing that can be played")
        }
        return out
    }

    func resolve(_ uri: String) async throws -> (TrackMetadata, any SourcePlugin) {
        let url = try Self.url(uri)
        guard let plugin = plugins.first(where: { $0.canResolve(url) }) else {
            throw TonearmError.unsupportedScheme(uri)
        }
        return (try await plugin.resolve(url), plugin)
    }

    func insert(_ resolved: [(TrackMetadata, any SourcePlugin)], at position: PlayQueue.Position) -> [TrackID] {
        guard !resolved.isEmpty else { return [] }
        let tracks = resolved.map { queue.makeTrack($0.0) }
        // TrackAdded names the track each one follows.
        let before: TrackID?
        switch position {
        case .end: before = queue.tracks.last?.id
        case .front: before = nil
        case .afterCurrent: before = queue.currentID ?? queue.tracks.last?.id
        case .after(let id): before = id
        }
        guard queue.insert(tracks, at: position) else { return [] }
        var after = before
        for (track, (_, plugin)) in zip(tracks, resolved) {
            emit(.trackAdded(track, after: after ?? .noTrack))
            after = track.id
            if plugin.needsEnrichment(track.metadata) { enrichments.add(track.id, plugin) }
        }
        if queue.currentID == nil, let first = queue.playOrder.first { queue.setCurrent(first) }
        changedQueueShape()
        return tracks.map(\.id)
    }

    func replace(with resolved: [(TrackMetadata, any SourcePlugin)]) -> [TrackID] {
        listeningMovedOn()
        halt()
        queue.clear()
        skipper.forgiveAll()
        let tracks = resolved.map { queue.makeTrack($0.0) }
        _ = queue.insert(tracks, at: .end)
        queue.setCurrent(queue.playOrder.first)
        for (track, (_, plugin)) in zip(tracks, resolved) where plugin.needsEnrichment(track.metadata) {
            enrichments.add(track.id, plugin)
        }
        emit(.trackListReplaced(queue.ids, current: queue.currentID))
        changedQueueShape()
        return tracks.map(\.id)
    }

    /// The next entry that has not failed, following loop and shuffle.
    func playable(after id: TrackID?, automatic: Bool) -> TrackID? {
        var candidate = queue.next(after: id, automatic: automatic)
        var seen: Set<TrackID> = []
        while let c = candidate, skipper.skips(c) {
            guard seen.insert(c).inserted else { return nil }
            candidate = queue.next(after: c, automatic: false)
        }
        return candidate
    }

    func changedQueueShape() {
        if let current = queue.currentID, !queue.contains(current) { queue.setCurrent(nil) }
        refreshHandover()
        publish()
        scheduleSave()
    }

    /// The items that follow the loaded one in play order, a few ahead (to the first repeat: a looped track follows
    /// itself, a looped playlist comes round once).
    func refreshHandover() {
        let current = loaded
        var upcoming: [PlaybackItem] = []
        var seen: Set<TrackID> = []
        var cursor = current
        var previous = current.flatMap { queue.track($0) }?.metadata
        while current != nil, upcoming.count < 8, let id = playable(after: cursor, automatic: true),
              let track = queue.track(id), let serial = id.serial {
            var item = playbackItem(track, serial)
            item.crossfade = crossfade.transition(from: previous, to: track.metadata)
            previous = track.metadata
            upcoming.append(item)
            guard id != current, seen.insert(id).inserted else { break }
            cursor = id
        }
        handover.set(current: current?.serial, upcoming: upcoming)
        // Items already handed over take the gain the queue now gives them (shuffle turned on: track gain).
        for item in upcoming { engine.setGain(item.gain, forToken: item.token) }
    }

    /// The source plugin of a queue entry's URI.
    func source(of uri: String) -> (any SourcePlugin)? {
        URL(string: uri).flatMap { url in plugins.first { $0.canResolve(url) } }
    }

    /// Lets the source of a track that is now heard know (the MIDI browser remembers it as the last choice).
    func tellSource(_ metadata: TrackMetadata) {
        guard let plugin = source(of: metadata.url) else { return }
        Task { await plugin.trackStarted(metadata) }
    }

    func applyMetadataNow(_ id: TrackID, _ new: TrackMetadata) {
        applyMetadataNow([(id, new)])
    }

    /// Takes new metadata of several entries in one turn: the state is published once for all of them (each
    /// publication of a changed queue copies it, which for a batch of 10,000 just-added entries was quadratic), then
    /// each entry's TrackMetadataChanged follows with that state.
    func applyMetadataNow(_ changes: [(TrackID, TrackMetadata)]) {
        var changed: [Track] = []
        for (id, new) in changes {
            guard var track = queue.track(id) else { continue }
            var merged = new
            // The stream's own duration beats a probe's estimate.
            if merged.length == nil { merged.length = track.metadata.length }
            guard merged != track.metadata else { continue }
            let before = track.metadata
            let loudnessChanged = merged.loudness != before.loudness
            track.metadata = merged
            queue.updateMetadata(id, merged)
            if loudnessChanged { applyGains() }
            if merged.length != before.length { listeningLengthChanged(id, merged) }
            // A station's song changed, whichever way its title came (the stream's tags, or the first ICY block read
            // beside the pipeline): the listening history counts per song.
            if merged.isLive == true, counter.listening?.id == id, counter.listening?.title != merged.title {
                listeningTitleChanged(id, merged.title, before: before)
            }
            changed.append(track)
        }
        guard let first = changed.first else { return }
        emitWithState(.trackMetadataChanged(first))
        for track in changed.dropFirst() { emit(.trackMetadataChanged(track)) }
        if let current = queue.currentID, changed.contains(where: { $0.id == current }) { publish() }
        scheduleSave()
    }
}

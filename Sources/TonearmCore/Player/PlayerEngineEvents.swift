import Foundation
import Playback

/// What the player does when the engine reports: a track heard, its length and tags, a seek settled, an end, a
/// failure. `at` is when the engine saw it: the time a track was heard counts from there, not from when the actor
/// got to it.
extension Player {
    func handle(_ event: PlaybackEvent, at: ContinuousClock.Instant = .now) {
        switch event {
        case .started(let item):
            let id = TrackID(serial: item.token)
            // The engine's own item: a start from an item replaced since (Play, then Next at once) is stale.
            guard loaded == id else { return }
            guard queue.contains(id) else {
                // Removed from the queue after it was handed over: go on as if it had ended. (Undoing the hand-over
                // instead would mean a READY while playbin sets up the next item's pads, which deadlocked GStreamer
                // 1.22 in the endurance run.)
                logger.info("\(item) was removed while it was being handed over; going on")
                if let next = playable(after: queue.currentID, automatic: true) { load(next, paused: status == .paused) } else { halt() }
                return
            }
            startingTrack.store(false, ordering: .relaxed)
            // A live stream heard before and started again is a reconnect: its position starts over.
            let (reconnected, actions) = reconnector.started(id, now: .now)
            perform(actions)
            let repeated = heard == id || reconnected
            heard = id
            if !reconnected { listeningStarted(id, at: at) }
            skipper.heard()
            let wasCurrent = queue.currentID == id
            queue.setCurrent(id)
            if !wasCurrent { refreshHandover() }  // what follows the new current item, for its own hand-over
            if !reconnected { continueIfEnding(heard: id) }
            if repeated { emit(.seeked(0)) } else if let metadata = queue.track(id)?.metadata { tellSource(metadata) }
            followStatus()
            publish()
            scheduleSave()
        case .stateChanged(let pipeline):
            // The player's status is the engine's promise to clients, but the faces' position counts from the moment
            // the pipeline really moves or stops; so does the time a listen has been heard.
            reportedPipeline = pipeline
            channel.publish(position: makeBasis())
            observeListening(pipeline, at: at)
        case .playingOn:
            channel.publish(position: makeBasis())
            observeListening(.playing, at: at)
        case .durationChanged(let item, let ns):
            let id = TrackID(serial: item.token)
            // Over the network the pipeline's duration can be a guess from the first pages' bitrate (an Ogg over HTTP
            // read 5.7 s of 30); a length its sender gave (a cast's DIDL-Lite) is kept.
            if let ns, ns > 0, var track = queue.track(id), track.metadata.length != ns / 1000,
               track.uri.hasPrefix("file:") || (track.metadata.length ?? 0) <= 0 {
                track.metadata.length = ns / 1000
                queue.updateMetadata(id, track.metadata)
                listeningLengthChanged(id, track.metadata)
                emitWithState(.trackMetadataChanged(track))
            }
            publish()
        case .tags(let item, let tags):
            let id = TrackID(serial: item.token)
            guard let track = queue.track(id) else { return }
            let plugin = source(of: track.uri)
            // A live song's change of title is taken in there, for the listening history too.
            applyMetadataNow(id, plugin?.applying(tags, to: track.metadata, artCache: artCache)
                             ?? track.metadata.merging(tags, artCache: artCache))
        case .buffering(let item, let percent):
            perform(reconnector.buffering(TrackID(serial: item.token), percent))
            observeListening(reportedPipeline, at: at)
        case .outputFailed(let output, let error, let wasPlaying):
            outputFailed(output, error, wasPlaying: wasPlaying)
        case .seekCompleted(let item, let ns):
            // Seeked and a tick went out when the seek was taken; the tick cadence restarts from where it landed.
            _ = ns
            guard TrackID(serial: item.token) == loaded else { return }
            if status == .playing { startTicking() }
            followLyrics()
            publish()
        case .finished(let item):
            let id = TrackID(serial: item.token)
            guard id == loaded else { return }
            // Heard up to the end the engine saw, not up to when this is handled.
            listeningEnded(at: at)
            // A live stream never ends by itself: the server closed it.
            switch reconnectIfLive(id, because: "the server closed the stream") {
            case .reconnecting: return
            case .gaveUp(let error):
                if let track = queue.track(id) { emit(.trackFailed(id, uri: track.uri, error: error)) }
            case .notLive: break
            }
            if let next = playable(after: id, automatic: true) {
                load(next, paused: false)
            } else {
                halt()
            }
        case .responseHeaders(let item, let status, let headers):
            let id = TrackID(serial: item.token)
            guard let track = queue.track(id), let plugin = source(of: track.uri) else { return }
            applyMetadataNow(id, plugin.applying(StreamResponse(status: status, headers: headers), to: track.metadata))
        case .failed(let item, let error):
            let id = TrackID(serial: item.token)
            let uri = queue.track(id)?.uri ?? item.uri // the queue's URI, not a rendition's
            guard explainingFailure != id else { return }
            // Already failed by its bytes (`checkDoubtfulLoadedFiles`) and passed over: reported once.
            guard id == loaded || !skipper.skips(id) else { return }
            var reason = TonearmError(Self.reason(for: error), "cannot play \(uri): \(error.message)")
            if id == loaded {
                switch reconnectIfLive(id, because: error.message) {
                case .reconnecting: return
                case .gaveUp(let lost): reason = lost
                case .notLive: break
                }
            }
            // A network track that failed before it was heard: its source looks into why (the player's request is
            // the only one made before playing, so a 404 or a playlist under a plain name shows only now).
            if id == loaded, heard != id, let track = queue.track(id), let plugin = source(of: track.uri),
               plugin.explainsFailures(of: track.metadata) {
                let metadata = track.metadata
                explainingFailure = id
                Task { [weak self, reason] in
                    let explanation = await plugin.explainFailure(of: metadata)
                    await self?.failed(id, uri: uri, reason: reason, explanation: explanation)
                }
                return
            }
            carryOutFailure(id, uri: uri, reason: reason)
        }
    }

    /// Carries out a track's failure: reported, then the next playable entry loaded (or the player stopped) when it
    /// was the loaded one. A playlist found in its place is played instead.
    func failed(_ id: TrackID, uri: String, reason: TonearmError, explanation: FailureExplanation?) async {
        defer { if explainingFailure == id { explainingFailure = nil } }
        var reason = reason
        switch explanation {
        case .playlist(let expansion):
            do {
                return try await playInstead(id, expansion)
            } catch {
                reason = error as? TonearmError ?? reason
            }
        case .error(let named): reason = named
        case nil: break
        }
        carryOutFailure(id, uri: uri, reason: reason)
    }

    /// Checks by its bytes, before the engine gets to it, a loaded file whose tags could not be read (random bytes or
    /// nothing under a song's name, or a song under a lying one): one that is not audio fails as if the engine had
    /// failed it, and the next is checked in turn. At a start the engine is still being built: without this each
    /// broken file waits for it, then for a pipeline of its own to fail, before the good one is even named.
    public func checkDoubtfulLoadedFiles() async {
        while let id = loaded, !skipper.skips(id), let track = queue.track(id), (track.metadata.length ?? 0) <= 0,
              let url = URL(string: track.uri), url.isFileURL, let plugin = source(of: track.uri) {
            do {
                try await plugin.verify(url)
                return
            } catch {
                // The user may have moved on, or the engine failed it first, while the bytes were read.
                guard loaded == id, !skipper.skips(id) else { continue }
                let reason = error as? TonearmError ?? TonearmError(.unsupportedType, "cannot play \(track.uri): \(error)")
                carryOutFailure(id, uri: track.uri, reason: reason)
            }
        }
    }

    private func carryOutFailure(_ id: TrackID, uri: String, reason: TonearmError) {
        logger.error("\(reason.message)")
        emit(.trackFailed(id, uri: uri, error: reason))
        if id == loaded { startingTrack.store(false, ordering: .relaxed) }
        let decision = skipper.failed(id, loaded: id == loaded, queueCount: queue.tracks.count)
        refreshHandover()
        switch decision {
        case .skip:
            if let next = playable(after: id, automatic: false) { load(next, paused: status == .paused) } else { halt() }
        case .halt: halt()
        case .passOver: break
        }
    }

    /// Puts a playlist's entries in place of the entry `id` that named it, playing the first when `id` was loaded.
    /// Throws when none of them can be played.
    private func playInstead(_ id: TrackID, _ expansion: PlaylistExpansion) async throws {
        let resolved = try await resolveEntries(expansion, of: queue.track(id)?.uri ?? id.path, depth: 0)
        // The user may have moved on while the entries were read: then they are only queued.
        guard queue.contains(id) else { return }
        let wasLoaded = id == loaded
        let ids = insert(resolved, at: .after(id))
        queue.remove(id)
        skipper.forgive(id)
        emit(.trackRemoved(id))
        changedQueueShape()
        if wasLoaded, let first = ids.first { load(first, paused: status == .paused) }
    }

    static func reason(for error: PlaybackError) -> TonearmError.Reason {
        switch error.domain {
        case "resource": return .notFound
        case "stream": return .cannotDecode
        default: return .playbackFailed
        }
    }
}

import Foundation
import Playback

/// Saving and restoring: the state file written soon after every change, the position every second while playing.
extension Player {
    /// Puts back a saved state, paused at the saved position.
    public func restore(_ state: PersistedState) async {
        queue = state.queue
        await remakeMissingStreams()
        volume = state.volume
        engine.setVolume(volume)
        if let micro = state.tickIntervalMicroseconds {
            let interval = Duration.microseconds(micro)
            if Configuration.tickIntervalRange.contains(interval) { tickInterval = interval }
        }
        if let saved = state.replayGainMode.flatMap(ReplayGainMode.init(rawValue:)) {
            replayGain.mode = saved
            replayGainModeSetLive = true
        }
        if let saved = state.equalizer {
            equalizer = saved
            // A preset the config no longer has: the curve stays, as custom bands.
            if let name = saved.preset, equalizerSettings.preset(named: name) == nil { equalizer.preset = nil }
            equalizerSetLive = true
            applyEqualizer()
        }
        if let seconds = state.crossfadeSeconds, CrossfadeSettings.secondsRange.contains(seconds) {
            crossfade.seconds = seconds
            crossfadeSetLive = true
        }
        if let threshold = state.crossfadeSilenceThreshold, CrossfadeSettings.silenceRange.contains(threshold) {
            crossfade.silenceThreshold = threshold
            crossfadeSetLive = true
        }
        if crossfadeSetLive { applyCrossfade(announce: false) }
        // Kept until the config's `output` changes (the start output was chosen from it already).
        if let saved = state.output, saved.configured == outputState.configuredStart { outputState.chosen = saved }
        emit(.trackListReplaced(queue.ids, current: queue.currentID))
        if let current = queue.currentID {
            load(current, paused: true, at: state.position)
        }
        publish()
    }

    /// A source's rendition (`streamURL`) lives in a cache a person may empty; the source makes it again.
    private func remakeMissingStreams() async {
        for track in queue.tracks {
            guard PersistedState.renditionIsMissing(track), let url = URL(string: track.uri),
                  let plugin = plugins.first(where: { $0.canResolve(url) }) else { continue }
            var metadata = track.metadata
            do {
                metadata.streamURL = try await plugin.resolve(url).streamURL
            } catch {
                logger.warning("\(track.uri): \(error)")
                metadata.streamURL = nil
            }
            queue.updateMetadata(track.id, metadata)
        }
    }

    public func persistedState() -> PersistedState {
        var state = PersistedState()
        state.queue = queue
        state.position = position()
        state.volume = volume
        if replayGainModeSetLive { state.replayGainMode = replayGain.mode.rawValue }
        if equalizerSetLive { state.equalizer = equalizer }
        if crossfadeSetLive {
            state.crossfadeSeconds = crossfade.seconds
            state.crossfadeSilenceThreshold = crossfade.silenceThreshold
        }
        state.output = outputState.chosen
        state.tickIntervalMicroseconds = Int64(tickInterval.components.seconds) * 1_000_000
            + tickInterval.components.attoseconds / 1_000_000_000_000
        return state
    }

    /// Writes the state file now and waits for it (at shutdown).
    public func save() {
        saveSoon()
        stateWriter?.flush()
    }

    /// Hands the state to the writer, which writes it off the actor.
    private func saveSoon() {
        guard let stateWriter, !isShutDown else { return }
        let state = persistedState()
        stateWriter.save(state)
        savedApartFromPosition = state.withoutPosition
    }

    func scheduleSave() {
        guard stateWriter != nil, !saveScheduled else { return }
        saveScheduled = true
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(50))
            await self?.flushScheduledSave()
        }
    }

    private func flushScheduledSave() {
        saveScheduled = false
        savePositionOrState()
    }

    /// Saves the position once a second while playing, so a crash loses at most a second; stopped or paused, nothing
    /// wakes for it (every change is saved as it is made). The saver ends by itself a second after playing stops, so a
    /// Pause or a Play does not start or end a task on its way (each would wake a thread just as the faces answer).
    func followPlayingForSaves() {
        guard status == .playing, !isShutDown, positionSaver == nil else { return }
        positionSaver = Task { [weak self] in
            while true {
                try? await Task.sleep(for: .seconds(1))
                guard !Task.isCancelled, let self, await self.saveWhilePlaying() else { return }
            }
        }
    }

    /// Saves while playing (only the position file when nothing else changed since the last save: comparing an
    /// unchanged queue is cheap, its storage is shared); otherwise false, and the saver ends.
    func saveWhilePlaying() -> Bool {
        guard status == .playing, !isShutDown else {
            positionSaver = nil
            return false
        }
        savePositionOrState()
        return true
    }

    /// The position record alone when nothing else changed since the last save, else the whole state: after every
    /// change, and right after a seek, playing or paused (a crash must not resume from before it). A Play or a Pause
    /// changes only the position, and rewriting a queue of 10,000 entries as JSON for it took the CPU from the faces
    /// just as they answered it (an MPD client's idle woke 3-7 ms after a pause instead of 1.5).
    func savePositionOrState() {
        guard let stateWriter, !isShutDown else { return }
        let state = persistedState()
        guard state.withoutPosition == savedApartFromPosition, let current = state.queue.currentID else {
            stateWriter.save(state)
            savedApartFromPosition = state.withoutPosition
            return
        }
        stateWriter.savePosition(state.position, of: current)
    }
}

extension PersistedState {
    /// Whether a queued track's rendition (a source's `streamURL`, in a cache a person may empty) is gone, so that
    /// restoring the queue needs its source to make it again.
    public var hasMissingRenditions: Bool { queue.tracks.contains(where: Self.renditionIsMissing) }

    static func renditionIsMissing(_ track: Track) -> Bool {
        guard let stream = track.metadata.streamURL.flatMap(URL.init(string:)), stream.isFileURL else { return false }
        return access(stream.path, R_OK) != 0
    }
}

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

    /// What is saved; `position` (µs) when the caller has just read it, else the pipeline is asked.
    public func persistedState(position known: Int64? = nil) -> PersistedState {
        var state = PersistedState()
        state.queue = queue
        state.position = known ?? position()
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

    /// How often the position is saved while playing: a crash loses at most this much.
    static let positionSaveInterval = Duration.seconds(1)

    /// Saves the position once a second while playing, so a crash loses at most a second; stopped or paused, nothing
    /// wakes for it (every change is saved as it is made). Ticks of a second or less save it themselves
    /// (`saveOnTick`): a timer of its own woke two threads and queried the pipeline once more every second. Slower
    /// ticks leave it to this saver, which ends by itself a second after playing stops, so a Pause or a Play does not
    /// start or end a task on its way (each would wake a thread just as the faces answer).
    func followPlayingForSaves() {
        guard status == .playing, !isShutDown, positionSaver == nil, !ticksSavePosition else { return }
        positionSaver = Task { [weak self] in
            while true {
                try? await Task.sleep(for: Self.positionSaveInterval)
                guard !Task.isCancelled, let self, await self.saveWhilePlaying() else { return }
            }
        }
    }

    /// Whether the ticks come often enough to save the position (then no saver runs).
    var ticksSavePosition: Bool { tickInterval <= Self.positionSaveInterval }

    /// Saves while playing (only the position file when nothing else changed since the last save: comparing an
    /// unchanged queue is cheap, its storage is shared); otherwise false, and the saver ends.
    func saveWhilePlaying() -> Bool {
        guard status == .playing, !isShutDown, !ticksSavePosition else {
            positionSaver = nil
            return false
        }
        savePositionOrState()
        return true
    }

    /// From each tick while playing: the save once about a second has passed since the last (half a tick early
    /// rather than a tick late, so ticks of exactly a second save each time). `position`: where the tick found it.
    func saveOnTick(position: Int64?) {
        guard ticksSavePosition, status == .playing else { return }
        if let last = positionSavedAt, last.duration(to: .now) + tickInterval / 2 < Self.positionSaveInterval { return }
        savePositionOrState(position: position)
    }

    /// The position record alone when nothing else changed since the last save, else the whole state: after every
    /// change, and right after a seek, playing or paused (a crash must not resume from before it). A Play or a Pause
    /// changes only the position, and rewriting a queue of 10,000 entries as JSON for it took the CPU from the faces
    /// just as they answered it (an MPD client's idle woke 3-7 ms after a pause instead of 1.5).
    /// `position`: where the playhead is, when the caller has just read it (else the pipeline is asked).
    func savePositionOrState(position: Int64? = nil) {
        guard let stateWriter, !isShutDown else { return }
        let state = persistedState(position: position)
        positionSavedAt = .now
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

import Foundation
import Playback

/// Transport and settings: what MPRIS's Player methods and writable properties do.
extension Player {
    public func play() {
        if outputIsLost {
            // Nothing would be heard: play once the output is back (and hold the track ready meanwhile).
            playWhenOutputIsBack()
            if status == .stopped { startCurrent(paused: true) }
            return
        }
        switch status {
        case .playing: return
        case .paused:
            guard loaded != nil else { return startCurrent(paused: false) }
            // The faces hear it before playbin's state change starts.
            engine.play { publishCommand(toggled: true) }
        case .stopped:
            startCurrent(paused: false)
        }
    }

    public func pause() {
        if outputIsLost { stayPausedWhenOutputIsBack() }
        guard status == .playing else { return }
        perform(reconnector.cancelReconnect())
        // The engine decides and holds the position where the faces read it now (the published basis, within 20 ms of
        // the pipeline's), so a Pause neither jumps the position nor queries the pipeline before its reply; the
        // state change starts once the faces are told (a thread woken before the reply took a CPU the reply needed).
        // The pipeline plays on meanwhile, and the paused position is set afresh from its report that it paused.
        let estimate = publishedPosition.map {
            PlaybackItem.Position(token: $0.item, nanoseconds: $0.microseconds.multipliedReportingOverflow(by: 1000).partialValue)
        }
        engine.pause(estimate: estimate) { publishCommand(thenTick: true, toggled: true) }
    }

    public func playPause() {
        status == .playing ? pause() : play()
    }

    /// Play, Pause or PlayPause carried out now on the caller's thread (`takeAtOnce`) when it only moves between
    /// playing and paused: the engine then only decides, and its state change runs on a thread of its own after the
    /// answer. False, with nothing done, when the Player is busy or the command would load a track or reset the
    /// pipeline (from stopped, with the output lost), which GStreamer does on the calling thread, or when it would wait
    /// for the last one's state change: send it the usual way.
    /// While the Player is busy (a start's work, an engine report), a Play when the published status is Playing is
    /// taken too: it changes nothing whatever that work is (`play` returns at once when playing), so it is answered
    /// as coming before it rather than after (in a start with both CPUs busy it waited 29 ms for the Player).
    public nonisolated func toggleAtOnce(_ command: Toggle) -> Bool {
        let taken = takeAtOnce { player -> Bool in
            // Nor while the last Play's or Pause's state change is still under way: the command would wait for it
            // (`PipelineShell.settle`), and the thread answering every face with it, behind a thread that runs at a
            // lower priority than the faces' (a double press, or a script toggling, with both CPUs busy).
            guard !player.outputIsLost, !player.engine.isChangingState,
                  player.status == .playing || (player.status == .paused && player.loaded != nil) else {
                return false
            }
            switch command {
            case .play: player.play()
            case .pause: player.pause()
            case .playPause: player.playPause()
            }
            return true
        }
        return taken ?? (command == .play && channel.read(\.snapshot.status) == .playing)
    }

    /// The commands `toggleAtOnce` takes.
    public enum Toggle: Sendable { case play, pause, playPause }

    public func stop() {
        guard status != .stopped else { return }
        halt()
    }

    /// Stops the engine and the ticks whatever the status; Stop, the end of the queue and failures share it.
    func halt() {
        stayPausedWhenOutputIsBack()
        perform(reconnector.cancelReconnect() + reconnector.stopStallWatch())
        startingTrack.store(false, ordering: .relaxed)
        engine.stop()
        publishCommand()
    }

    /// MPRIS Next: the following track. With CanGoNext false (the end, not looping) it has no effect, as the spec
    /// asks; the queue stops by itself when the last track ends.
    public func next() {
        guard makeSnapshot().canGoNext, let target = playable(after: queue.currentID, automatic: false) else { return }
        listeningMovedOn()
        switchTo(target, keepingStatus: true)
    }

    /// MPRIS Previous; with CanGoPrevious false it has no effect.
    public func previous() {
        guard makeSnapshot().canGoPrevious else { return }
        var candidate = queue.previous(before: queue.currentID)
        var seen: Set<TrackID> = []
        while let c = candidate, skipper.skips(c), seen.insert(c).inserted {
            candidate = queue.previous(before: c)
        }
        guard let target = candidate, !skipper.skips(target) else { return }
        listeningMovedOn()
        switchTo(target, keepingStatus: true)
    }

    /// Relative seek in microseconds from where the position reads (so quick seeks add up): clamps at 0, and past
    /// the end acts as Next.
    public func seek(by offset: Int64) {
        // Whatever the engine plays, even in the moment a gapless change is heard before the player has taken it in.
        guard status != .stopped, let loaded else { return }
        let (target, overflow) = seekOrigin(loaded).addingReportingOverflow(offset)
        let clamped = overflow ? (offset < 0 ? 0 : Int64.max) : max(0, target)
        if let length = queue.track(loaded)?.metadata.length, clamped > length {
            next()
            return
        }
        seekEngine(to: clamped)
    }

    /// Where a relative seek counts from: the position the faces read when their basis counts for the item the
    /// engine plays (a client's "10 s on" counts from what it showed; a pipeline that stalls for a moment under load
    /// left the basis running on until the next tick, and the seek landed short of what the client asked), else the
    /// pipeline's.
    private func seekOrigin(_ loaded: TrackID) -> Int64 {
        guard let published = publishedPosition, published.item == loaded.serial else { return position() }
        return published.microseconds
    }

    /// Absolute seek; ignored for a stale track id or a position outside the track.
    public func setPosition(_ id: TrackID, _ microseconds: Int64) {
        guard status != .stopped, loaded != nil, id == queue.currentID, id == loaded, microseconds >= 0 else { return }
        if let length = queue.current?.metadata.length, microseconds > length { return }
        seekEngine(to: microseconds)
    }

    /// Hands a seek (µs) to the engine; when it is taken, clients hear Seeked at once and Position reads the target.
    private func seekEngine(to microseconds: Int64) {
        let (ns, overflow) = microseconds.multipliedReportingOverflow(by: 1000)
        guard engine.seek(to: overflow ? Int64.max : ns) else { return }
        emit(.seeked(position()))
        emitTick()
        if status == .playing { startTicking() }
        followLyrics()
        publish()
        savePositionOrState()
    }

    // MARK: Settings

    public func setLoop(_ loop: LoopStatus) {
        guard loop != queue.loop else { return }
        queue.loop = loop
        changedQueueShape()
    }

    public func setShuffle(_ on: Bool) {
        guard on != queue.shuffle else { return }
        queue.setShuffle(on)
        changedQueueShape()
    }

    /// Linear volume; negative values become 0 and values above 1 become 1 (the spec's advice).
    public func setVolume(_ value: Double) throws {
        guard value.isFinite else { throw TonearmError.invalidValue("volume must be a number between 0 and 1") }
        let clamped = min(1.0, max(0.0, value))
        guard clamped != volume else { return }
        volume = clamped
        engine.setVolume(clamped)
        publish()
        scheduleSave()
    }

    /// Playback rate; 0 pauses, values outside MinimumRate…MaximumRate are refused.
    public func setRate(_ value: Double) throws {
        guard value.isFinite else { throw TonearmError.invalidValue("rate must be a number") }
        if value == 0 {
            pause()
            return
        }
        guard (Self.minimumRate...Self.maximumRate).contains(value) else {
            throw TonearmError.invalidValue("rate \(value) is outside \(Self.minimumRate)…\(Self.maximumRate)")
        }
        guard value != engine.snapshot.rate else { return }
        // The engine keeps the rate (and carries it over loads and hand-overs); the player keeps no copy.
        guard engine.setRate(value) else { throw TonearmError.invalidValue("the rate \(value) was refused") }
        followLyrics()
        publish()
    }

    public func setTickInterval(_ interval: Duration) throws {
        guard Configuration.tickIntervalRange.contains(interval) else {
            throw TonearmError.invalidValue("tick interval must be between 10 ms and 60 s")
        }
        guard interval != tickInterval else { return }
        tickInterval = interval
        emitWithState(.tickIntervalChanged(interval))
        if status == .playing { startTicking() }
        // Ticks slower than a second leave the position's saves to a saver of their own.
        followPlayingForSaves()
        scheduleSave()
    }

    // MARK: Internals

    /// After a command: its caller is answered, clients hear of it, ticks and the lyrics line follow the status, the
    /// state is saved soon. Published first: the reply and the faces' signals are what a client waits for, and the
    /// tick timer's restart is not.
    /// `thenTick`: the position the command left the playhead at follows the new status, and both are handed to the
    /// faces in one wake-up of each face's thread; the status comes first, so the PropertiesChanged a panel waits
    /// for is not built behind the Tick.
    /// `toggled`: a move between playing and paused, whose caller is answered once its status and standing position are
    /// readable (`PlayerChannel.publishTaken`), before the snapshot is built.
    func publishCommand(thenTick: Bool = false, toggled: Bool = false) {
        // Standing on both sides of the answer: a Pause holds where the faces read, a Play moves once playbin plays.
        if toggled { channel.publishTaken(status: status, position: engine.reportedPosition / 1000) }
        publish(command: !toggled, deliver: !thenTick)
        if thenTick { emitTick() }
        followStatus()
        scheduleSave()
    }

    /// Makes `id` current; plays it if playing (or always, when not keeping status), loads it paused if paused.
    func switchTo(_ id: TrackID, keepingStatus: Bool) {
        let previousStatus = status
        queue.setCurrent(id)
        switch (keepingStatus, previousStatus) {
        case (true, .stopped):
            halt()
        case (true, .paused):
            load(id, paused: true)
        default:
            fadeSkip()
            load(id, paused: false)
        }
    }

    func startCurrent(paused: Bool) {
        guard let id = queue.currentID ?? queue.playOrder.first else { return }
        queue.setCurrent(id)
        load(id, paused: paused)
    }

    func load(_ id: TrackID, paused requested: Bool, at position: Int64 = 0) {
        guard let track = queue.track(id), let serial = id.serial else { return }
        // While the output is lost nothing plays: the track waits paused, and plays once the output is back.
        var paused = requested
        if outputIsLost, !paused {
            playWhenOutputIsBack()
            paused = true
        }
        if reconnector.trackID != id { perform(reconnector.cancelReconnect()) }
        perform(reconnector.stopStallWatch())
        queue.setCurrent(id)
        heard = nil
        let (ns, overflow) = max(0, position).multipliedReportingOverflow(by: 1000)
        startingTrack.store(true, ordering: .relaxed)
        engine.load(playbackItem(track, serial), startPaused: paused, at: overflow ? 0 : ns)
        stallWatchBeganBeforeEngine = !engine.canReceiveData
        if Self.mayBeLive(track) { perform(reconnector.newLiveStream(id)) }
        if status == .playing { startTicking() } else { stopTicking() }
        refreshHandover()
        publish()
        scheduleSave()
    }

    /// What the engine opens for a queue entry, with its ReplayGain factor as the queue stands now.
    func playbackItem(_ track: Track, _ serial: UInt64) -> PlaybackItem {
        var item = Self.item(track, serial)
        item.gain = gain(for: track)
        return item
    }

    /// What the engine opens for a queue entry: the source's rendition when it made one. A local file of known
    /// length is known to seek, so a seek sent while it opens is taken.
    static func item(_ track: Track, _ serial: UInt64) -> PlaybackItem {
        PlaybackItem(uri: track.metadata.streamURL ?? track.uri, token: serial, knownSeekable: knownSeekable(track),
                     isLive: mayBeLive(track))
    }

    /// A live stream, or a network stream not known yet to be a file (it is played before its server said which):
    /// it starts after a short buffer and must bring data within the stall timeout.
    static func mayBeLive(_ track: Track) -> Bool {
        if let live = track.metadata.isLive { return live }
        let uri = (track.metadata.streamURL ?? track.uri).lowercased()
        return (uri.hasPrefix("http:") || uri.hasPrefix("https:")) && (track.metadata.length ?? 0) <= 0
    }

    /// A local file of known length seeks (and MIDI, which GStreamer's query calls unseekable); others once the
    /// pipeline says so.
    static func knownSeekable(_ track: Track) -> Bool {
        let uri = track.metadata.streamURL ?? track.uri
        return track.metadata.seeksDespiteQuery == true || (uri.hasPrefix("file:") && (track.metadata.length ?? 0) > 0)
    }
}

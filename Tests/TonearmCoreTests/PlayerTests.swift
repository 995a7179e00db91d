import Foundation
import Playback
import Synchronization
import TestSupport
import Testing
@testable import TonearmCore

/// The Player against the real playback state machine, with a fake pipeline moved by hand: no GStreamer, no bus.
@Suite struct PlayerTests {
    let engine = MachineEngine()
    let player: Player
    let heard = EventLog()
    let art = TemporaryDirectory("player-art")

    init() async {
        player = Player(engine: engine, plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url))
        await player.start()
        heard.follow(player)
    }

    var seeked: [Int64] { heard.all.compactMap { if case .seeked(let p) = $0 { return p }; return nil } }

    func queue(_ names: String...) async throws -> [TrackID] {
        // Files that exist: the hand-over checks the next file is there.
        let uris = try names.map { name -> String in
            let file = art.file(name)
            try Data().write(to: file)
            return file.absoluteString
        }
        let (ids, errors) = await player.addSkippingBad(uris, at: .end, replacing: true)
        #expect(errors.isEmpty)
        return ids
    }

    @Test func playingIsAnnouncedAtOnceAndCanSeekBeforeThePipelineSaysSo() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        let s = await player.snapshot
        #expect(s.status == .playing)
        #expect(s.canSeek, "a local file of known length can seek from the moment it is current")
        #expect(s.current?.id == ids[0])
    }

    @Test func onlyAMoveBetweenPlayingAndPausedIsTakenInPlace() async throws {
        // Stopped, with nothing loaded: a Play would load a track, which GStreamer does on the calling thread.
        #expect(!player.toggleAtOnce(.play))
        #expect(!player.toggleAtOnce(.playPause))
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        #expect(player.state.snapshot.status == .playing)
        // Between playing and paused: carried out on this thread, and published before it returns. (Declined while
        // the Player still takes the engine's reports: then asked again.)
        let player = self.player
        func inPlace(_ command: Player.Toggle) async -> PlaybackStatus? {
            var status: PlaybackStatus?
            _ = await eventually(timeout: .seconds(20), interval: .milliseconds(1)) {
                status = await onThread { player.toggleAtOnce(command) ? player.state.snapshot.status : nil }
                return status != nil
            }
            return status
        }
        #expect(await inPlace(.playPause) == .paused)
        #expect(await inPlace(.play) == .playing)
        #expect(await inPlace(.pause) == .paused)
        // Stopped again: the usual way.
        await player.stop()
        #expect(!player.toggleAtOnce(.playPause))
        #expect(player.state.snapshot.status == .stopped)
    }

    @Test func aPlayWhilePlayingIsTakenEvenWhileThePlayerIsBusy() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        let player = self.player
        // The Player kept busy on its own executor: a Play while Playing changes nothing and is taken at once; a
        // Pause or PlayPause is not (it goes the usual way, behind the busy work).
        let busy = BusyPlayer(player)
        try await waitUntil("the Player is busy") { busy.isBusy }
        #expect(await onThread { player.toggleAtOnce(.play) })
        #expect(await onThread { !player.toggleAtOnce(.pause) && !player.toggleAtOnce(.playPause) })
        #expect(player.state.snapshot.status == .playing)
        await busy.end()
        await player.pause()
        #expect(player.state.snapshot.status == .paused)
        let busyAgain = BusyPlayer(player)
        try await waitUntil("the Player is busy") { busyAgain.isBusy }
        #expect(await onThread { !player.toggleAtOnce(.play) }, "paused: a Play goes the usual way")
        await busyAgain.end()
    }

    @Test func aToggleThatWouldWaitForTheLastStateChangeGoesTheUsualWay() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        let player = self.player, engine = self.engine
        // While playbin still carries out the last state change, the command would wait for it on the face's thread:
        // declined every time, with nothing done, however idle the Player is meanwhile (a quarter of a second).
        engine.setChangingState(true)
        for _ in 0..<250 {
            #expect(await onThread { !player.toggleAtOnce(.pause) && !player.toggleAtOnce(.playPause) })
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(player.state.snapshot.status == .playing)
        // Once it is done: taken in place again.
        engine.setChangingState(false)
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(1)) { await onThread { player.toggleAtOnce(.pause) } })
        #expect(player.state.snapshot.status == .paused)
    }

    @Test func aToggleIsAnsweredFromItsStatusBeforeItsSnapshotIsAnnounced() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.bus(.settled(.playing))
        let player = self.player
        try await waitUntil("the position moves") { player.state.position.rate > 0 }
        let subscription = player.events.subscribe(capacity: 1 << 10)
        /// The state a caller is answered from (read in the answer itself), then where that state stands afterwards.
        struct Answered: Sendable { var status: PlaybackStatus; var rate: Double; var sequence: UInt64 }
        func toggle(_ command: Player.Toggle) async -> Answered? {
            let seen = Mutex<Answered?>(nil)
            _ = await eventually(timeout: .seconds(20), interval: .milliseconds(1)) {
                await onThread {
                    CommandTaken.answering({
                        let s = player.state
                        seen.withLock { $0 = Answered(status: s.snapshot.status, rate: s.position.rate, sequence: s.sequence) }
                    }) { player.toggleAtOnce(command) }
                }
            }
            return seen.withLock { $0 }
        }
        for (command, status) in [(Player.Toggle.pause, PlaybackStatus.paused), (.play, .playing), (.playPause, .paused)] {
            let answered = try #require(await toggle(command), "\(command) was answered")
            // Answered once the new status and a standing position are readable: a read right after the reply
            // shows the change, and the position does not run on before playbin has moved.
            #expect(answered.status == status)
            #expect(answered.rate == 0)
            // The snapshot announcing it is built and published after the answer: its event comes later in sequence.
            var announced: Sequenced<PlayerEvent>?
            while let e = await subscription.next() {
                if case .changed(let s) = e.event, s.status == status { announced = e; break }
            }
            #expect(try #require(announced).sequence > answered.sequence)
            #expect(player.state.snapshot.status == status)
        }
    }

    @Test func aSeekDuringPrerollIsTakenAndReadBackAtOnce() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        await player.pause()
        await player.setPosition(ids[0], 20_000_000)
        #expect(await player.position() == 20_000_000)
        #expect(seeked == [] || seeked.last == 20_000_000)
        try await waitUntil("Seeked") { seeked.last == 20_000_000 }
        engine.prerollAndStart()
        #expect(engine.commands.contains { $0.hasPrefix("seek 20000000000") })
        engine.seekLands()
        #expect(await player.snapshot.status == .paused)
        #expect(await player.position() == 20_000_000, "paused: the position stays where the seek put it")
    }

    /// A track loaded while the pipeline still reports the last one playing (its reset's state changes not in yet):
    /// nothing of it is heard until it prerolled, so the published position stands at 0 until it starts, rather than
    /// running ahead and stepping back when it does (a stress run read 0.163 s, then 0.303 s 0.6 s later).
    @Test func aTrackStillPrerollingDoesNotAdvanceThePublishedPosition() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.bus(.settled(.playing))
        engine.setPipelinePosition(5_000_000_000)
        await player.goTo(ids[1])
        #expect(engine.pipelineState == .playing, "the stale report this test is about")
        #expect(engine.snapshot.prerollingFromStart)
        let basis = player.state.position
        #expect(basis.position == 0 && basis.rate == 0, "\(basis)")
        engine.setPipelinePosition(0)
        engine.prerollAndStart()
        try await waitUntil("the position basis moving once the track started") { player.state.position.rate == 1 }
    }

    /// A Pause holds the position the faces read at that moment (the published basis and the clock) for the item the
    /// Player has loaded: the engine need not ask the pipeline before the reply.
    @Test func aPauseHandsTheEngineThePositionTheFacesRead() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.setPipelinePosition(5_000_000_000)
        engine.bus(.settled(.playing))
        try await waitUntil("the basis moving from 5 s") {
            let basis = player.state.position
            return basis.rate == 1 && basis.position >= 5_000_000
        }
        let before = player.state.position
        await player.pause()
        let reached = before.position(at: .now) * 1000
        let estimate = try #require(engine.pauseEstimates.last ?? nil)
        #expect(estimate.token == ids[0].serial)
        #expect(estimate.nanoseconds >= 5_000_000_000 && estimate.nanoseconds <= reached,
                "held \(estimate.nanoseconds) ns, the faces read up to \(reached) ns")
    }

    /// A Pause in the moment a hand-over is heard by the engine but not yet taken in by the Player: the position the
    /// faces read still counts for the track before, and the estimate says so (the engine then asks its pipeline).
    @Test func aPauseRightAfterAHandOverNamesTheItemItsPositionCountsFor() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.bus(.settled(.playing))
        try await waitUntil("the basis moving") { player.state.position.rate == 1 }
        // Run in the Player's isolation, so that the engine's report of the new track waits behind the Pause (taken
        // once the Player is idle: nothing is done while it is busy).
        try await waitUntil("the Player idle") {
            player.takeAtOnce { p -> Bool in
                engine.aboutToFinish()
                engine.bus(.streamStart(group: 99, duration: 60_000_000_000, seekable: true))
                p.pause()
                return true
            } ?? false
        }
        #expect(engine.snapshot.item?.token == ids[1].serial, "the engine plays the next track")
        let estimate = try #require(engine.pauseEstimates.last ?? nil)
        #expect(estimate.token == ids[0].serial, "the faces' position counts for the track before")
    }

    @Test func quickRelativeSeeksAddUp() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.setPipelinePosition(7_000_000_000)
        let ticked = ContinuousClock.now
        await player.emitTick()  // the faces' position, which a relative seek counts from, is set from the pipeline
        await player.seek(by: 3_000_000)
        await player.seek(by: 3_000_000)
        // The first counts from the basis running on since the tick, the second from the first's target.
        let ranOn = Int64(ticked.duration(to: .now) / .microseconds(1)) + 1
        let landed = await player.position()
        #expect(landed >= 13_000_000 && landed <= 13_000_000 + ranOn, "landed at \(landed) µs")
    }

    /// A relative seek counts from the position the faces read, not from the pipeline's when the two differ (a
    /// pipeline that stalls for a moment while the faces' basis runs on until the next tick).
    @Test func aRelativeSeekCountsFromThePositionTheFacesRead() async throws {
        try await player.setTickInterval(.seconds(60))  // no tick sets the basis afresh meanwhile, however slow the test
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.setPipelinePosition(7_000_000_000)
        let ticked = ContinuousClock.now
        await player.emitTick()
        engine.setPipelinePosition(6_000_000_000)  // the pipeline reads a second less, the faces 7 s and on
        await player.seek(by: 3_000_000)
        let ranOn = Int64(ticked.duration(to: .now) / .microseconds(1)) + 1
        let landed = await player.position()
        #expect(landed >= 10_000_000 && landed <= 10_000_000 + ranOn, "landed at \(landed) µs, not 9 s")
    }

    @Test func nextAndPreviousHaveNoEffectWhenTheyCannotGo() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[1])
        let before = engine.commands
        #expect(await player.snapshot.canGoNext == false)
        await player.next()
        #expect(engine.commands == before, "Next with CanGoNext false changed something")
        #expect(await player.snapshot.status == .playing)
        await player.goTo(ids[0])
        let again = engine.commands
        #expect(await player.snapshot.canGoPrevious == false)
        await player.previous()
        #expect(engine.commands == again)
        #expect(await player.snapshot.current?.id == ids[0])
    }

    @Test func withNoCurrentTrackNextAndPreviousChangeNothing() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[1])
        try await player.remove(ids[1])  // the current one, the last: nothing is current now
        let before = await player.snapshot
        #expect(before.current == nil && !before.canGoNext && !before.canGoPrevious)
        await player.next()
        await player.previous()
        #expect(await player.snapshot == before)
    }

    @Test func theEndOfATrackPlaysTheNextAndTheEndOfTheQueueStops() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.bus(.endOfStream)
        try await waitUntil("b loaded") { await player.snapshot.current?.id == ids[1] }
        engine.prerollAndStart()
        engine.bus(.endOfStream)
        try await waitUntil("stopped") { await player.snapshot.status == .stopped }
        #expect(await player.position() == 0)
    }

    @Test func aGaplessHandOverSwitchesTheTrackWhenItIsHeard() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.aboutToFinish()
        #expect(await player.snapshot.current?.id == ids[0], "not before the next track is heard")
        engine.bus(.streamStart(group: 99, duration: 60_000_000_000, seekable: true))
        try await waitUntil("b current") { await player.snapshot.current?.id == ids[1] }
        #expect(engine.commands.filter { $0.hasPrefix("load") }.count == 1, "a hand-over, not a load")
    }

    @Test func aTrackRemovedAfterItWasHandedOverIsSkippedWhenItStarts() async throws {
        let ids = try await queue("a.ogg", "b.ogg", "c.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.aboutToFinish()
        try await player.remove(ids[1])
        engine.bus(.streamStart(group: 77, duration: 60_000_000_000, seekable: true))
        try await waitUntil("c loaded") { engine.snapshot.item?.token == ids[2].serial }
        #expect(await player.snapshot.current?.id != ids[1], "a removed track never becomes current")
    }

    @Test func aQueueEditThatKeepsTheNextTrackKeepsTheHandOver() async throws {
        let ids = try await queue("a.ogg", "b.ogg", "c.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.aboutToFinish()
        try await player.remove(ids[2])
        engine.bus(.streamStart(group: 78, duration: 60_000_000_000, seekable: true))
        try await waitUntil("b current") { await player.snapshot.current?.id == ids[1] }
    }

    @Test func aFailedTrackIsReportedAndSkipped() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        engine.bus(.error(PlaybackError(domain: "stream", code: 4, message: "Could not determine type of stream."), now: .now))
        try await waitUntil("b loaded") { await player.snapshot.current?.id == ids[1] }
        // Events reach this test through a task of its own: wait for the report, not just for the player.
        let failures: @Sendable () -> [(TrackID, String)] = { [heard] in
            heard.all.compactMap { event -> (TrackID, String)? in
                if case .trackFailed(let id, _, let e) = event { return (id, e.name) }
                return nil
            }
        }
        try await waitUntil("TrackFailed heard") { !failures().isEmpty }
        #expect(failures().first?.0 == ids[0] && failures().first?.1 == "org.tonearm.Error.CannotDecode")
        #expect(await player.snapshot.status == .playing)
    }

    @Test func aStaleStartFromAReplacedLoadIsIgnored() async throws {
        let ids = try await queue("a.ogg", "b.ogg")
        await player.goTo(ids[0])
        await player.next()
        engine.prerollAndStart()
        try await waitUntil("b heard") { await player.snapshot.current?.id == ids[1] }
        #expect(await player.snapshot.current?.id == ids[1])
    }

    @Test func hugePositionsAndOffsetsDoNotTrap() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        await player.setPosition(ids[0], .max)
        await player.seek(by: .max)
        await player.seek(by: .min)
        #expect(await player.position() >= 0)
    }

    @Test func pauseFreezesAndPlayResumesWithTicks() async throws {
        let ids = try await queue("a.ogg")
        await player.goTo(ids[0])
        engine.prerollAndStart()
        await player.pause()
        #expect(await player.snapshot.status == .paused)
        #expect(engine.snapshot.status == .paused, "the engine's status is the player's")
        await player.play()
        #expect(await player.snapshot.status == .playing)
        #expect(engine.commands.suffix(2) == ["pause", "play"])
    }
}

extension PlayerTests {
    @Test func aReplayGainModeSetLiveOutlivesARestartAndTheConfigsDoesNotOverrideIt() async throws {
        #expect(await player.persistedState().replayGainMode == nil, "the config's mode is not saved as if chosen")
        await player.setReplayGainMode(.album)
        let saved = await player.persistedState()
        #expect(saved.replayGainMode == "album")
        var configured = ReplayGainSettings()
        configured.mode = .track
        let restarted = Player(engine: MachineEngine(), plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url),
                               replayGain: configured)
        await restarted.restore(saved)
        #expect(await restarted.replayGainMode == .album)
        #expect(await restarted.persistedState().replayGainMode == "album")
    }
}

/// A station's data cannot come before the engine exists (a start slowed by a cold registry or a busy machine); its
/// time to bring data counts from the engine, in full.
@Suite struct StreamStallTests {
    let art = TemporaryDirectory("player-stall")

    @Test func aStationGetsItsWholeStallTimeoutOnceTheEngineIsThere() async throws {
        let engine = MachineEngine()
        engine.setCanReceiveData(false)
        let timeout = Duration.milliseconds(300)
        let policy = StreamReconnectPolicy(attempts: 3, firstDelay: .seconds(1), maximumDelay: .seconds(3), stallTimeout: timeout)
        let player = Player(engine: engine, plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url),
                            reconnectPolicy: policy)
        await player.start()
        let heard = EventLog()
        heard.follow(player)
        let station = art.file("live.ogg")
        try Data().write(to: station)
        let (ids, errors) = await player.addSkippingBad([station.absoluteString], at: .end, replacing: true)
        #expect(errors.isEmpty)
        await player.goTo(ids[0])
        #expect(await player.snapshot.status == .playing)
        var failures: [TrackID] { heard.all.compactMap { if case .trackFailed(let id, _, _) = $0 { id } else { nil } } }

        // Three and a half: the engine comes halfway through a watch begun before it.
        await letTimePass(timeout * 3 + timeout / 2, because: "three stall timeouts and a half with no engine")
        #expect(failures.isEmpty, "no data can come before the engine exists")

        let engineCame = ContinuousClock.now
        engine.setCanReceiveData(true)
        // Nothing comes with the engine either: the station fails, a whole timeout after the engine came, not when a
        // watch begun before it runs out.
        try await waitUntil("the station failed for want of data") { failures == [ids[0]] }
        #expect(ContinuousClock.now - engineCame >= timeout)
        await player.shutdown()
    }
}

/// What the player said, in order, readable from the test.
final class EventLog: Sendable {
    private let events = Mutex<[PlayerEvent]>([])
    func append(_ event: PlayerEvent) { events.withLock { $0.append(event) } }
    var all: [PlayerEvent] { events.withLock { $0 } }

    /// Takes in every event of `player` from now on.
    func follow(_ player: Player) {
        let subscription = player.events.subscribe(capacity: 1 << 20)
        Task { [self] in for await e in subscription { append(e.event) } }
    }
}

/// What a change writes to disk: the whole state file only when more than the position changed.
@Suite struct PlayerSavingTests {
    let dir = TemporaryDirectory("player-saving")

    func inode(_ url: URL) -> UInt64? {
        var info = stat()
        return stat(url.path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    @Test func aPauseWritesThePositionAloneAndAVolumeChangeTheWholeState() async throws {
        let store = StateStore(url: dir.file("state.json"))
        let engine = MachineEngine()
        let player = Player(engine: engine, plugins: [FakeSource()], stateStore: store, artCache: ArtCache(folder: dir.file("art")))
        await player.start()
        let files = try ["a.ogg", "b.ogg"].map { name -> String in
            try Data().write(to: dir.file(name))
            return dir.file(name).absoluteString
        }
        let (ids, errors) = await player.addSkippingBad(files, at: .end, replacing: true)
        #expect(errors.isEmpty)
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.setPipelinePosition(7_000_000_000)
        await player.save()
        // A second name keeps the written file's inode alive, so a file renamed over it cannot be given the same one.
        let kept = dir.file("state.json.kept")
        #expect(link(store.url.path, kept.path) == 0, "the state file is written")
        let written = try #require(inode(kept))
        #expect(try store.load()?.queue.currentID == ids[0])

        engine.setPipelinePosition(8_000_000_000)
        await player.pause()
        // Every state file is a new file renamed over the old one: the same inode means it was not rewritten.
        try await waitUntil("the pause's position is on disk") { (try? store.load())?.position == 8_000_000 }
        await player.setPosition(ids[0], 9_000_000)
        try await waitUntil("the seek's position is on disk") { (try? store.load())?.position == 9_000_000 }
        #expect(inode(store.url) == written, "a pause and a seek rewrote the whole state file")

        try await player.setVolume(0.25)
        try await waitUntil("the volume is on disk") { (try? store.load())?.volume == 0.25 }
        #expect(inode(store.url) != written)
        await player.shutdown()
    }

    /// While playing the position reaches the disk about once a second: from the ticks when they come that often
    /// (no timer of its own), from a saver when they are slower.
    @Test func whilePlayingThePositionIsSavedByTheTicksOrBySlowTicksSaver() async throws {
        let store = StateStore(url: dir.file("state.json"))
        let engine = MachineEngine()
        let player = Player(engine: engine, plugins: [FakeSource()], stateStore: store, artCache: ArtCache(folder: dir.file("art")))
        await player.start()
        try await player.setTickInterval(.milliseconds(100))
        try Data().write(to: dir.file("a.ogg"))
        let (ids, _) = await player.addSkippingBad([dir.file("a.ogg").absoluteString], at: .end, replacing: true)
        await player.goTo(ids[0])
        engine.prerollAndStart()
        try await waitUntil("playing") { player.state.snapshot.status == .playing }
        // Each change below is saved once by itself (a Play's, a tick interval's): the position set after that save
        // reaches the disk only through the saves made while playing.
        try await waitUntil("the Play's save is on disk") { (try? store.load())?.queue.currentID == ids[0] }
        engine.setPipelinePosition(20_000_000_000)
        try await waitUntil("a tick's save is on disk") { ((try? store.load())?.position ?? 0) >= 20_000_000 }
        #expect(await player.positionSaver == nil, "ticks of 0.1 s save the position: no saver runs")

        try await player.setTickInterval(.seconds(30))
        #expect(await player.positionSaver != nil, "ticks of 30 s leave the saves to the saver")
        try await waitUntil("the interval's save is on disk") { (try? store.load())?.tickIntervalMicroseconds == 30_000_000 }
        engine.setPipelinePosition(40_000_000_000)
        try await waitUntil("the saver's save is on disk") { ((try? store.load())?.position ?? 0) >= 40_000_000 }

        try await player.setTickInterval(.milliseconds(500))
        try await waitUntil("the interval's save is on disk") { (try? store.load())?.tickIntervalMicroseconds == 500_000 }
        engine.setPipelinePosition(60_000_000_000)
        try await waitUntil("a tick's save is on disk again") { ((try? store.load())?.position ?? 0) >= 60_000_000 }
        try await waitUntil("the saver ends once the ticks save") { await player.positionSaver == nil }
        await player.shutdown()
    }
}

/// Runs `body` on a thread of its own, outside any task (as a bus thread calls).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// Keeps a Player's executor busy, from a job of its own, until `end`: what a face may take meanwhile.
final class BusyPlayer: Sendable {
    final class Flags: Sendable {
        let started = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
    }
    let flags: Flags
    private let job: Task<Void, Never>

    var isBusy: Bool { flags.started.load(ordering: .acquiring) }

    init(_ player: Player) {
        let flags = Flags()
        self.flags = flags
        job = Task { await player.spin(flags) }
    }

    func end() async {
        flags.release.store(true, ordering: .releasing)
        await job.value
    }
}

extension Player {
    func spin(_ flags: BusyPlayer.Flags) {
        flags.started.store(true, ordering: .releasing)
        while !flags.release.load(ordering: .acquiring) { usleep(500) }
    }
}

import Foundation
import Playback
import TestSupport
import Testing
@testable import TonearmCore

/// Outputs on the Player, against the real playback machine with a fake pipeline: switching keeps the track and
/// position; a lost output holds playback paused with a reason and plays on once it is back.
@Suite struct PlayerOutputTests {
    let engine = MachineEngine()
    let player: Player
    let heard = EventLog()
    let art = TemporaryDirectory("player-outputs")
    static let kitchen = AudioOutput(name: "kitchen", kind: .snapcastPipe(path: "/tmp/kitchen", format: .init()))
    static let den = AudioOutput(name: "den", kind: .snapcastTCP(host: "127.0.0.1", port: 4953, format: .init()))

    init() async {
        player = await Self.player(engine, art, attempts: 500)
        heard.follow(player)
    }

    /// A started player that tries a lost output `attempts` times, 20 ms apart.
    static func player(_ engine: MachineEngine, _ art: TemporaryDirectory, attempts: Int) async -> Player {
        let player = Player(engine: engine, plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url),
                            outputs: [kitchen, den], outputRecovery: OutputRecoveryPolicy(attempts: attempts, interval: .milliseconds(20)))
        await player.start()
        return player
    }

    /// Two tracks queued, the first playing at 12 s.
    func playingAt12s() async throws -> [TrackID] {
        try await Self.playingAt12s(player, engine, art)
    }

    static func playingAt12s(_ player: Player, _ engine: MachineEngine, _ art: TemporaryDirectory) async throws -> [TrackID] {
        let uris = try ["a.ogg", "b.ogg"].map { name -> String in
            let file = art.file(name)
            try Data().write(to: file)
            return file.absoluteString
        }
        let (ids, _) = await player.addSkippingBad(uris, at: .end, replacing: true)
        await player.goTo(ids[0])
        engine.prerollAndStart()
        engine.setPipelinePosition(12_000_000_000)
        return ids
    }

    @Test func theListHasTheStartingOutputFirstThenTheConfiguredOnes() async {
        #expect(await player.outputs.map(\.name) == ["default", "kitchen", "den"])
        #expect(await player.outputs[1].kind == "snapcast-pipe")
        #expect(await player.outputName == "default")
        #expect(await player.outputProblem == "")
    }

    @Test func switchingWhilePlayingKeepsTrackPositionQueueAndStatus() async throws {
        let ids = try await playingAt12s()
        try await player.setOutput("kitchen")
        #expect(engine.commands.last == "output kitchen")
        #expect(await player.outputName == "kitchen")
        #expect(await player.snapshot.status == .playing)
        #expect(await player.snapshot.current?.id == ids[0])
        #expect(await player.snapshot.trackIDs == ids)
        #expect(await player.position() == 12_000_000, "the re-opened item starts where it was")
        engine.prerollAndStart()
        engine.seekLands()
        #expect(await player.position() == 12_000_000)
        try await waitUntil("Output announced") { heard.all.contains(.outputChanged(name: "kitchen", problem: "")) }
        #expect(!heard.all.contains { if case .seeked = $0 { return true }; return false }, "no Seeked: the position did not jump")
    }

    @Test func aSwitchIsSavedAndKeptByARestoreUntilTheConfigsOutputChanges() async throws {
        #expect(await player.persistedState().output == nil, "nothing chosen live yet")
        engine.setUnavailable(["kitchen"])
        _ = try? await player.setOutput("kitchen")
        #expect(await player.persistedState().output == nil, "a switch that failed is not saved")
        try await player.setOutput("den")
        #expect(await player.persistedState().output == SavedOutput(name: "den", configured: nil))

        // A restore keeps the saved choice while the config's output is as it was then, and drops it otherwise.
        let saved = await player.persistedState()
        for (configured, kept) in [(nil, true), ("kitchen", false)] as [(String?, Bool)] {
            let next = Player(engine: MachineEngine(), plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url),
                              outputs: [Self.kitchen, Self.den], configuredOutput: configured)
            await next.start()
            await next.restore(saved)
            #expect(await next.persistedState().output == (kept ? saved.output : nil), "config's output: \(String(describing: configured))")
        }
    }

    @Test func anOutputThatCannotOpenIsAnErrorAndPlaybackStaysWhereItWas() async throws {
        let ids = try await playingAt12s()
        engine.setUnavailable(["kitchen"])
        let before = engine.commands
        await #expect { try await player.setOutput("kitchen") } throws: { ($0 as? TonearmError)?.name == "org.tonearm.Error.OutputUnavailable" }
        await #expect { try await player.setOutput("attic") } throws: { ($0 as? TonearmError)?.name == "org.tonearm.Error.NoSuchOutput" }
        #expect(engine.commands == before, "nothing was asked of the engine")
        #expect(await player.outputName == "default")
        #expect(await player.snapshot.status == .playing)
        #expect(await player.snapshot.current?.id == ids[0])
    }

    @Test func aLostOutputPausesWithAReasonAndPlaysOnWhenItIsBack() async throws {
        let ids = try await playingAt12s()
        try await player.setOutput("kitchen")
        engine.setUnavailable(["kitchen"])
        engine.failOutput()
        try await waitUntil("the output reported lost") { await player.outputProblem.contains("Broken pipe") }
        #expect(await player.snapshot.status == .paused)
        #expect(await player.snapshot.trackIDs == ids, "the queue is kept")
        #expect(await player.position() == 12_000_000)
        try await waitUntil("OutputFailed announced") { heard.all.contains(.outputFailed(name: "kitchen", message: "write: Broken pipe")) }
        // Reconnect attempts fail meanwhile; Next keeps it paused, ready to play.
        await player.next()
        #expect(await player.snapshot.status == .paused)
        #expect(await player.snapshot.current?.id == ids[1])
        engine.setUnavailable([])
        try await waitUntil("the output back and playing") { await player.snapshot.status == .playing }
        #expect(await player.outputProblem == "")
        #expect(await player.outputName == "kitchen")
        #expect(engine.commands.last == "output kitchen playing")
    }

    @Test("an output switched to while GStreamer is still being set up is answered at once and used when the engine comes")
    func aSwitchBeforeTheEngineIsNotHeld() async throws {
        let deferred = DeferredEngine(output: .sink("fakesink sync=true"))
        let file = AudioOutput(name: "file", kind: .pipeline("fakesink"))
        // A Snapcast FIFO that is not there: connecting needs no GStreamer, so it is refused now, not later.
        let missing = AudioOutput(name: "missing", kind: .snapcastPipe(path: art.file("no-fifo").path, format: .init()))
        let player = Player(engine: deferred, plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: art.url),
                            outputs: [file, missing])
        await player.start()
        let song = art.file("a.ogg")
        try Data().write(to: song)
        _ = await player.open([song.absoluteString])
        await #expect { try await player.setOutput("missing") } throws: {
            ($0 as? TonearmError)?.name == "org.tonearm.Error.OutputUnavailable" && ($0 as? TonearmError)?.message.contains("does not exist") == true
        }
        #expect(await player.outputName == "default")
        try await player.setOutput("file")
        #expect(await player.outputName == "file")
        #expect(player.state.snapshot.output == "file", "every face reads it at once")
        #expect(await player.snapshot.status == .playing)

        let real = MachineEngine()
        deferred.attach(real)
        // Used before the item is handed over: nothing is played into the output the engine was built with.
        let serial = try #require(player.state.snapshot.current?.id.serial)
        #expect(real.commands.prefix(2) == ["output file", "load \(serial)"])
        #expect(await player.outputName == "file")
        real.prerollAndStart()
        #expect(await player.snapshot.status == .playing)
    }

    @Test func pausedMeanwhileStaysPausedWhenTheOutputIsBack() async throws {
        _ = try await playingAt12s()
        engine.setUnavailable(["default"])
        engine.failOutput()
        try await waitUntil("the output reported lost") { await !player.outputProblem.isEmpty }
        await player.pause()
        engine.setUnavailable([])
        try await waitUntil("the output back") { await player.outputProblem.isEmpty }
        #expect(await player.snapshot.status == .paused)
        #expect(engine.commands.last == "output default paused")
    }

    @Test func reconnectingGivesUpAfterTheAttemptsAndPlayTriesAgain() async throws {
        let engine = MachineEngine()
        let player = await Self.player(engine, art, attempts: 3)
        _ = try await Self.playingAt12s(player, engine, art)
        engine.setUnavailable(["default"])
        engine.failOutput()
        try await waitUntil("giving up") { await player.outputProblem.contains("gave up after 3 attempts") }
        #expect(await player.snapshot.status == .paused)
        engine.setUnavailable([])
        await player.play()
        try await waitUntil("playing again after Play") { await player.snapshot.status == .playing }
        #expect(await player.outputProblem == "")
    }
}

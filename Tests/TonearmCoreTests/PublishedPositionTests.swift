import Foundation
import Playback
import TestSupport
import Testing
@testable import TonearmCore

/// The position every face reads comes from the published basis and the clock, never from the pipeline; it must
/// still agree with the pipeline's own position while playing, after seeks and across a pause.
@Suite(.serialized) struct PublishedPositionTests {
    /// How far the published position may be from the pipeline's.
    static let tolerance: Int64 = 20_000

    @Test func thePublishedPositionAgreesWithThePipelinesOwn() async throws {
        let dir = TemporaryDirectory("published-position")
        let file = dir.file("tone.wav")
        try WAV.sine(seconds: 40, sampleRate: 22050, channels: 1).write(to: file)
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        let player = Player(engine: engine, plugins: [FakeSource()], stateStore: nil, artCache: ArtCache(folder: dir.url))
        await player.start()
        defer { Task { await player.shutdown() } }
        let (ids, errors) = await player.addSkippingBad([file.absoluteString], at: .end, replacing: true)
        #expect(errors.isEmpty)
        await player.goTo(ids[0])

        try await Self.compare(player, engine, samples: 20, "while playing")
        let asked = ContinuousClock.now
        await player.setPosition(ids[0], 25_000_000)
        // Read right after the seek: its target, or a little past it if the seek has settled and plays on meanwhile
        // (no further than the time since it was asked).
        let read = player.positionNow()
        let since = asked.duration(to: .now)
        let bound = 25_000_000 + Int64(since.components.seconds) * 1_000_000 + Int64(since.components.attoseconds / 1_000_000_000_000)
        #expect(read >= 25_000_000 && read <= bound + Self.tolerance, "read \(read) µs right after SetPosition(25 s)")
        try await Self.compare(player, engine, samples: 20, "after a seek")
        await player.seek(by: -10_000_000)
        try await Self.compare(player, engine, samples: 10, "after a relative seek")
        await player.pause()
        // The faces' position is set afresh when the player takes the pipeline's own report that it paused: where it
        // really stopped, a little past where the command found it (0.16 ms on a loaded run). It stands from there.
        try await waitUntil("the player took the pipeline's pause") { await player.reportedPipeline == .paused }
        let paused = player.positionNow()
        try await Self.compare(player, engine, samples: 5, "paused")
        #expect(player.positionNow() == paused, "paused, the position stands still")
        await player.play()
        try await Self.compare(player, engine, samples: 10, "playing again")
    }

    /// Takes `samples` readings once the pipeline and the published basis both move: the pipeline's position,
    /// bracketed by the published position just before and just after it.
    static func compare(_ player: Player, _ engine: PlaybackEngine, samples: Int, _ what: String) async throws {
        try await waitUntil("the published position moves \(what)") { player.state.position.rate > 0 || engine.pipelineState != .playing && player.state.snapshot.status != .playing }
        var taken = 0
        var attempts = 0
        while taken < samples {
            attempts += 1
            try #require(attempts < 10_000, "no clean reading \(what)")
            let before = ContinuousClock.now
            guard let pipeline = engine.position else { continue }
            let after = ContinuousClock.now
            // A reading the scheduler cut in two measures the machine, not the player: take another.
            guard before.duration(to: after) < .milliseconds(2) else { continue }
            let basis = player.state.position
            let low = basis.position(at: before) - tolerance, high = basis.position(at: after) + tolerance
            #expect((low...high).contains(pipeline / 1000),
                    "\(what): the pipeline read \(pipeline / 1000) µs, the published basis \(basis.position(at: before))…\(basis.position(at: after))")
            taken += 1
            // The next reading some way on, where the position moves.
            if basis.rate > 0 {
                let reached = basis.position(at: after) + 30_000
                try await waitUntil("the position moves on \(what)") { player.positionNow() >= reached }
            }
        }
    }
}

import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The playhead rules at the timings that broke them: commands right after a start, while the first track opens,
/// with both CPUs kept busy by other processes.
@Suite(.serialized) struct PlayheadTests {
    /// Paused means frozen: two reads half a second apart agree, and stay where the seek put the playhead.
    static func expectFrozen(_ d: Daemon, near target: Int64, _ context: String) async throws {
        let first = try await d.position()
        await letTimePass(.milliseconds(500), because: "a playhead that moved would move in that time")
        let second = try await d.position()
        #expect(try await d.status() == "Paused", "\(context): status")
        #expect(first == second, "\(context): Paused, yet the position moved from \(first) to \(second)")
        #expect(abs(second - target) < 300_000, "\(context): position \(second), asked for \(target)")
    }

    @Test(arguments: 0..<4)
    func pauseAndSetPositionAtOnceAfterAStartHold(round: Int) async throws {
        let burners = try CPUBurners()
        defer { burners.stop() }
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        let b = try d.sine("b.wav", seconds: 60)
        try await d.start([a, b])
        let track = try await d.trackID()
        #expect(!track.isEmpty, "the track shows once the daemon answers")
        _ = try await d.call(Daemon.player, "Pause")
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(track), .int64(20_000_000)])
        let right = try await d.position()
        #expect(right == 20_000_000, "Position right after SetPosition during the start: \(right)")
        await letTimePass(.milliseconds(500), because: "the same SetPosition again half a second later, as in the series that broke the playhead")
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(track), .int64(20_000_000)])
        try await d.waitFor("the seeks settle") { try await d.get(Daemon.player, "CanSeek") == .bool(true) }
        try await Self.expectFrozen(d, near: 20_000_000, "round \(round)")
        // And it plays on from there.
        _ = try await d.call(Daemon.player, "Play")
        try await d.waitFor("advances from 20 s") { try await d.position() > 20_300_000 }
        #expect(try await d.status() == "Playing")
    }

    @Test func relativeSeeksSentWhileTheTrackOpensAddUp() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        try await d.start([a])
        #expect(try await d.get(Daemon.player, "CanSeek") == .bool(true), "a local file of known length can seek at once")
        _ = try await d.call(Daemon.player, "Pause")
        for _ in 0..<3 { _ = try await d.call(Daemon.player, "Seek", [.int64(5_000_000)]) }
        #expect(try await d.position() >= 15_000_000)
        try await Self.expectFrozen(d, near: try await d.position(), "three seeks of 5 s")
    }

    @Test func statusAndPositionAgreeThroughAQuickSeries() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        let b = try d.sine("b.wav", seconds: 60)
        try await d.start([a, b])
        let first = try await d.trackID()
        // A burst with no waiting between the calls.
        _ = try await d.call(Daemon.player, "Pause")
        _ = try await d.call(Daemon.player, "Play")
        let sent = ContinuousClock.now
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(first), .int64(30_000_000)])
        _ = try await d.call(Daemon.player, "Pause")
        let played = Int64((ContinuousClock.now - sent) / .microseconds(1))
        _ = try await d.call(Daemon.player, "Seek", [.int64(-10_000_000)])
        let after = try await d.position()
        // 20 s exactly, unless the SetPosition landed and played on for a moment before the Pause took hold (a
        // loaded machine): then the Seek is rightly relative to where it paused, a little past 30 s, and no further
        // than the wall time from sending the SetPosition to the Pause's reply (at rate 1 it cannot outrun the clock).
        #expect(after >= 20_000_000 && after < 20_200_000 + played,
                "Position after the burst: \(after), \(played) µs from SetPosition to Pause\n\(d.log.suffix(2000))")
        try await Self.expectFrozen(d, near: after, "after the burst")
        _ = try await d.call(Daemon.player, "Next")
        try await d.waitFor("second track, paused") { try await d.trackID() != first }
        try await Self.expectFrozen(d, near: 0, "Next while paused")
    }
}

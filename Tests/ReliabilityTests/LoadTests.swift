import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 4: many concurrent clients mixing reads and commands, with playerctl --follow listening.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LoadTests {
    actor Tally {
        var latencies: [Double] = []
        var calls = 0
        var expectedErrors: [String: Int] = [:]
        var unexpected: [String] = []
        func add(_ ms: Double) { latencies.append(ms); calls += 1 }
        func error(_ name: String, _ what: String) {
            calls += 1
            if name.hasPrefix("org.tonearm.Error.") { expectedErrors[name, default: 0] += 1 } else if unexpected.count < 20 { unexpected.append("\(what): \(name)") }
        }
    }

    @Test func concurrentClientsGetAnswersAndTicksKeepTime() async throws {
        let clients = Reliability.size(8, 32)
        let seconds = Reliability.size(5.0, 30.0)
        let interval = 0.1
        let d = try Daemon()
        let songs = try (0..<4).map { try d.sine("song\($0).wav", seconds: 120) }
        try await d.start(songs, tickInterval: interval)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let ticks = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "Tick"))
        let followers = try (0..<2).map { _ in try ChildProcess("/usr/bin/playerctl", ["--player=tonearm", "--follow", "status"], environment: d.environment) }
        let tally = Tally()
        let deadline = ContinuousClock.now + .seconds(seconds)
        let address = d.bus.address
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in 0..<clients {
                group.addTask {
                    let connection = try DBusConnection.connect(address: address)
                    defer { connection.close() }
                    var random = SeededGenerator(seed: Reliability.seed &+ UInt64(c))
                    var added: [String] = []
                    while ContinuousClock.now < deadline {
                        let choice = random.next() % 100
                        let clock = ContinuousClock()
                        let start = clock.now
                        do {
                            switch choice {
                            case 0..<45:
                                _ = try await connection.getProperty(destination: Daemon.busName, path: Daemon.path, interface: Daemon.player, name: "Position")
                            case 45..<65:
                                _ = try await connection.getAllProperties(destination: Daemon.busName, path: Daemon.path, interface: Daemon.player)
                            case 65..<75:
                                _ = try await connection.call(destination: Daemon.busName, path: Daemon.path, interface: Daemon.player, member: "Seek",
                                                              arguments: [.int64(Int64(random.next() % 2_000_000) - 1_000_000)])
                            case 75..<82:
                                _ = try await connection.call(destination: Daemon.busName, path: Daemon.path, interface: Daemon.player, member: "PlayPause")
                            case 82..<91:
                                _ = try await connection.call(destination: Daemon.busName, path: Daemon.path, interface: Daemon.trackList, member: "AddTrack",
                                                              arguments: [.string(Daemon.uri(songs[Int(random.next() % 4)])), .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .bool(false)])
                                let tracks = try await connection.getProperty(destination: Daemon.busName, path: Daemon.path, interface: Daemon.trackList, name: "Tracks")
                                if let first = tracks.arrayValue?.first?.stringValue { added.append(first) }
                            default:
                                guard let id = added.popLast() else { continue }
                                _ = try await connection.call(destination: Daemon.busName, path: Daemon.path, interface: Daemon.trackList, member: "RemoveTrack",
                                                              arguments: [.objectPath(id)])
                            }
                            await tally.add((clock.now - start).milliseconds)
                        } catch let error as DBusError {
                            await tally.error(error.name, "\(choice)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for f in followers { f.kill() }
        let latencies = await tally.latencies, calls = await tally.calls
        let unexpected = await tally.unexpected, expectedErrors = await tally.expectedErrors
        // A gap between two ticks counts when the daemon's positions in them moved as much as the clock did (playing
        // throughout: no pause, no seek in between); a gap over twice the interval is a late tick.
        let timed = ticks.timed.compactMap { entry in entry.1.arguments[1].int64Value.map { (entry.0, $0) } }
        let positions = timed.map(\.1)
        let steps = zip(timed, timed.dropFirst()).compactMap { a, b -> Int64? in
            let wall = Int64(b.0.timeIntervalSince(a.0) * 1e6), moved = b.1 - a.1
            return moved > 0 && abs(moved - wall) < Int64(interval * 1e6) ? wall : nil
        }
        let missed = steps.filter { Double($0) > 2 * interval * 1e6 }.count
        #expect(unexpected.isEmpty, "unexpected errors: \(unexpected)")
        #expect(d.process?.isRunning == true)
        #expect(!positions.isEmpty)
        let p50 = latencies.percentile(0.5), p99 = latencies.percentile(0.99)
        Reliability.report(4, "Load", tried: [
            "\(clients) concurrent clients for \(Int(seconds)) s, each on its own connection, mixing Get(Position) 45%, GetAll 20%, Seek 10%, "
                + "PlayPause 7%, AddTrack 9%, RemoveTrack 9%; two `playerctl --follow status` listening; Tick every \(interval) s",
        ], held: [
            "\(calls) calls; errors other than expected org.tonearm.Error.* replies: \(unexpected.count)",
            "ticks while playing: \(steps.count) intervals, \(missed) longer than twice the interval (gaps where the daemon's position moved with the clock; "
                + "reported, not asserted: tests never fail on a timing)",
        ], figures: [("calls", "\(calls)"), ("round trip p50 (ms)", String(format: "%.2f", p50)), ("round trip p99 (ms)", String(format: "%.2f", p99)),
                     ("longest tick gap while playing (ms)", "\((steps.max() ?? 0) / 1000)"), ("ticks missed", "\(missed)")]
            + expectedErrors.sorted { $0.key < $1.key }.map { ("expected error \($0.key)", "\($0.value)") })
    }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}

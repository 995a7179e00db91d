import DBus
import Foundation

enum Metric: CaseIterable, Hashable, Sendable {
    case startup, coldStartup, p50, p99, concurrentP50, concurrentP99
    /// The library scan (see `ScanBench`), compared with mpd rather than mpv.
    case scanCold, scanWarm, scanMemory

    static let playback: [Metric] = [.startup, .coldStartup, .p50, .p99, .concurrentP50, .concurrentP99]
    static let scan: [Metric] = [.scanCold, .scanWarm, .scanMemory]

    /// Files per second: more is better. Everything else is a time or a size: less is better.
    var higherIsBetter: Bool { self == .scanCold || self == .scanWarm }

    func label(clients: Int) -> String {
        switch self {
        case .startup: "start-up to bus name (ms)"
        case .coldStartup: "start-up to bus name, cold GStreamer registry (ms)"
        case .p50: "Get(Position) p50, 1 client (µs)"
        case .p99: "Get(Position) p99, 1 client (µs)"
        case .concurrentP50: "Get(Position) p50, \(clients) clients (µs)"
        case .concurrentP99: "Get(Position) p99, \(clients) clients (µs)"
        case .scanCold: "library scan, cold (files/s)"
        case .scanWarm: "library scan, warm (files/s)"
        case .scanMemory: "peak memory during scan (MB)"
        }
    }
}

/// Per player: every run's figure for each metric, or why the player could not be measured.
struct Results: Sendable {
    var samples: [String: [Metric: [Double]]] = [:]
    var failures: [String: String] = [:]

    /// The median over runs, or nil.
    func median(_ player: String, _ metric: Metric) -> Double? {
        guard let values = samples[player]?[metric], !values.isEmpty else { return nil }
        return Stats.median(values)
    }
}

struct Bench: Sendable {
    let players: [Player]
    let runs: Int
    let calls: Int
    let clients: Int
    let track: String
    /// A GStreamer registry shared by the runs (built by the warm-up start), as on any machine
    /// where GStreamer has run before; `.coldStartup` runs without it.
    let gstRegistry: String
    static let warmUpCalls = 20

    /// Runs are interleaved (tonearm, mpv, tonearm, mpv, …) so drift on the machine hits both alike.
    /// A failing tonearm fails the bench; a failing peer is reported and left out.
    func measure() async throws -> Results {
        var results = Results()
        let clock = ContinuousClock()
        // One untimed start each, so the first timed one does not pay for a cold page cache.
        for player in players {
            do {
                _ = try await Session.with(gstRegistry: gstRegistry) { try await $0.launch(player, player.idleArguments).0 }
            } catch {
                try fail(player, error, &results)
            }
        }
        for run in 1...runs {
            for player in players where results.failures[player.label] == nil {
                let started = clock.now
                do {
                    let startup = try await Session.with(gstRegistry: gstRegistry) { try await $0.launch(player, player.idleArguments).0 }
                    let cold = try await Session.with(gstRegistry: nil) { try await $0.launch(player, player.idleArguments).0 }
                    let figures = try await Session.with(gstRegistry: gstRegistry) { session in
                        let (_, name) = try await session.launch(player, player.playArguments(track))
                        try await session.waitUntilPlaying(name)
                        let single = try await Self.roundTrips(session.client, name, calls: calls)
                        let connections = try (0..<clients).map { _ in try DBusConnection.connect(address: session.bus.address) }
                        defer { connections.forEach { $0.close() } }
                        let all = try await withThrowingTaskGroup(of: [Double].self) { group in
                            for connection in connections {
                                group.addTask { try await Self.roundTrips(connection, name, calls: calls) }
                            }
                            return try await group.reduce(into: []) { $0 += $1 }
                        }
                        return [Metric.p50: Stats.percentile(single, 0.5), .p99: Stats.percentile(single, 0.99),
                                .concurrentP50: Stats.percentile(all, 0.5), .concurrentP99: Stats.percentile(all, 0.99)]
                    }
                    var add = figures
                    add[.startup] = startup.microseconds / 1000
                    add[.coldStartup] = cold.microseconds / 1000
                    for (metric, value) in add { results.samples[player.label, default: [:]][metric, default: []].append(value) }
                    let took = (clock.now - started).microseconds / 1e6
                    log("run \(run)/\(runs) \(player.label): start-up \(format(add[.startup]!)) ms "
                        + "(cold registry \(format(add[.coldStartup]!)) ms), "
                        + "p50 \(format(add[.p50]!)) µs, p99 \(format(add[.p99]!)) µs, "
                        + "\(clients) clients p50 \(format(add[.concurrentP50]!)) µs, p99 \(format(add[.concurrentP99]!)) µs "
                        + "(\(format(took)) s)")
                } catch {
                    try fail(player, error, &results)
                }
            }
        }
        return results
    }

    private func fail(_ player: Player, _ error: any Error, _ results: inout Results) throws {
        if player.label == "tonearm" { throw error }
        log("\(player.label) could not be measured: \(error)")
        results.failures[player.label] = "\(error)".split(separator: "\n").first.map(String.init) ?? "failed"
        results.samples[player.label] = nil
    }

    /// `calls` sequential Properties.Get(Player, Position) round trips (after a few untimed ones), in µs.
    static func roundTrips(_ client: DBusConnection, _ name: String, calls: Int) async throws -> [Double] {
        func get() async throws -> DBusValue {
            try await client.getProperty(destination: name, path: Session.mprisPath, interface: Session.playerInterface,
                                         name: "Position")
        }
        let first = try await get()
        guard first.int64Value != nil else { throw BenchError("\(name): Position is not an integer: \(first)") }
        for _ in 1..<warmUpCalls { _ = try await get() }
        let clock = ContinuousClock()
        var times: [Double] = []
        times.reserveCapacity(calls)
        for _ in 0..<calls {
            let t = clock.now
            _ = try await get()
            times.append((clock.now - t).microseconds)
        }
        return times
    }
}

func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Three significant digits-ish: 1234, 123, 12.3, 1.23.
func format(_ value: Double) -> String {
    let digits = value >= 100 ? 0 : value >= 10 ? 1 : 2
    return String(format: "%.\(digits)f", value)
}

import DBus
import Foundation

/// Method-call round trips through the bus: the player's Get(Position), and dbus-daemon's own GetId (the floor:
/// the same client, the same bus, no player in the path).
enum CallLatency {
    static let warmUpCalls = 20

    /// What is called, from send to reply.
    enum Target: Sendable {
        case position(String)
        case busGetId

        func call(_ client: DBusConnection) async throws {
            switch self {
            case .position(let name):
                let value = try await client.getProperty(destination: name, path: Session.mprisPath,
                                                         interface: Session.playerInterface, name: "Position")
                guard value.int64Value != nil else { throw BenchError("\(name): Position is not an integer: \(value)") }
            case .busGetId:
                _ = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                          interface: "org.freedesktop.DBus", member: "GetId")
            }
        }
    }

    /// `calls` sequential round trips (after a few untimed ones), in µs.
    static func sequential(_ client: DBusConnection, _ target: Target, calls: Int) async throws -> [Double] {
        for _ in 0..<warmUpCalls { try await target.call(client) }
        let clock = ContinuousClock()
        var times: [Double] = []
        times.reserveCapacity(calls)
        for _ in 0..<calls {
            let t = clock.now
            try await target.call(client)
            times.append((clock.now - t).microseconds)
        }
        return times
    }

    /// `clients` new connections making `calls` sequential round trips each, all at once: every timing (µs) and
    /// the calls per second over the whole group (from the first start to the last reply).
    static func concurrent(address: String, _ target: Target, clients: Int, calls: Int) async throws -> ([Double], Double) {
        let connections = try (0..<clients).map { _ in try DBusConnection.connect(address: address) }
        defer { connections.forEach { $0.close() } }
        for connection in connections { for _ in 0..<warmUpCalls { try await target.call(connection) } }
        let clock = ContinuousClock()
        let start = clock.now
        let all = try await withThrowingTaskGroup(of: [Double].self) { group in
            for connection in connections {
                group.addTask { try await sequential(connection, target, calls: calls) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let seconds = (clock.now - start).microseconds / 1e6
        return (all, Double(all.count) / seconds)
    }
}

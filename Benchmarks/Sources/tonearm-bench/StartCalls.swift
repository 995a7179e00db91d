import DBus
import Foundation
import TestSupport

/// Issue 28's "every MPRIS call answered within 20 ms at any moment of a start": a player spawned with a file is
/// sent MPRIS calls one after another from the moment its name appears, for a while, and the slowest answer is kept;
/// once on a quiet machine and once with every CPU kept busy by a spinning shell.
enum StartCalls {
    /// How long the calls go on after the name appears.
    static let seconds = 2

    /// The calls sent in turn: reads a panel widget makes, a whole-state read, introspection and a command that
    /// changes nothing (Play while playing).
    static let calls: [(interface: String, member: String, arguments: [DBusValue])] = [
        ("org.freedesktop.DBus.Properties", "Get", [.string(Session.playerInterface), .string("PlaybackStatus")]),
        ("org.freedesktop.DBus.Properties", "Get", [.string(Session.playerInterface), .string("Metadata")]),
        ("org.freedesktop.DBus.Properties", "Get", [.string(Session.playerInterface), .string("Position")]),
        ("org.freedesktop.DBus.Properties", "GetAll", [.string(Session.playerInterface)]),
        ("org.freedesktop.DBus.Introspectable", "Introspect", []),
        (Session.playerInterface, "Play", []),
    ]

    /// The slowest answer (ms) to the calls sent from the name's appearance for `seconds`, with `busy` spinning
    /// shells running from before the spawn to the end. A call that fails counts as answered (an error is an answer).
    static func slowest(_ player: Player, track: String, gstRegistry: String, busy: Int) async throws -> Double {
        let burners = try (0..<busy).map { _ in
            try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], captureOutput: false, processGroup: true)
        }
        defer { for burner in burners { burner.kill() } }
        return try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            let launched = try await session.launchAndAsk(player, .playing(track), ask: false)
            let clock = ContinuousClock()
            let end = clock.now + .seconds(seconds)
            let named = clock.now
            var slowest = (took: Duration.zero, what: "", at: Duration.zero)
            var index = 0
            while clock.now < end {
                let call = calls[index % calls.count]
                index += 1
                let sent = clock.now
                _ = try? await session.client.call(destination: launched.busName, path: Session.mprisPath, interface: call.interface,
                                                   member: call.member, arguments: call.arguments, timeout: .seconds(10))
                if clock.now - sent > slowest.took {
                    let what = call.member == "Get" ? "Get(\(call.arguments[1].stringValue ?? ""))" : call.member
                    slowest = (clock.now - sent, what, sent - named)
                }
            }
            log("\(player.label)\(busy > 0 ? ", \(busy) CPUs busy" : ""): slowest call \(slowest.what), "
                + "\(format(slowest.took.microseconds / 1000)) ms, sent \(format(slowest.at.microseconds / 1000)) ms after the name appeared")
            return slowest.took.microseconds / 1000
        }
    }
}

import DBus
import DaemonHarness
import Foundation
import Glibc
import TestSupport
import Testing

/// `/api/v1/events` follows the one fan-out MPRIS and MPD idle follow.
@Suite(.serialized, .timeLimit(.minutes(4))) struct WebEventsTests {
    @Test func theSocketStartsWithTheStateAndFollowsEveryFace() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 120)
        let web = try await WebRig.start([a], daemon: d)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let events = EventsClient(web)
        defer { events.close() }
        let first = try await events.waitFor("the first frame") { _ in true }
        #expect(first.type == "state")
        #expect((first.state["track"] as? [String: Any])?["title"] as? String == "alpha")

        try await d.playerctl("pause")
        let paused = try await events.waitFor("Paused") { $0.type == "state" && $0.status == "Paused" }
        #expect(paused.sequence > first.sequence)
        try await d.playerctl("position", "10")
        let sought = try await events.waitFor("Seeked") { $0.type == "seeked" }
        #expect(abs((sought["position"] as? Double ?? 0) - 10) < 0.5)
        _ = try await d.call("org.tonearm.Player1", "Enqueue", [.stringArray([Daemon.uri(a)])])
        _ = try await events.waitFor("a queue frame") { $0.type == "queue" }
        try await d.playerctl("play")
        _ = try await events.waitFor("a tick") { $0.type == "tick" }

        // Sequence numbers only grow.
        let numbers = events.all.map(\.sequence)
        #expect(numbers == numbers.sorted())
    }

    @Test func aStuckClientIsDroppedAndTheOthersKeepUp() async throws {
        let d = try Daemon()
        // A long name makes every state frame about a kilobyte, so a client that reads nothing falls behind soon.
        let a = try d.sine(String(repeating: "long", count: 55) + ".wav", seconds: 120)
        let web = try await WebRig.start([a], daemon: d)
        let port = try #require(Int(web.base.split(separator: ":").last ?? ""))
        let stuck = try StuckSocket(port: port)
        defer { stuck.close() }
        let events = EventsClient(web)
        defer { events.close() }
        _ = try await events.waitFor("the first frame") { _ in true }

        var volume = 0.0
        var dropped = false
        for i in 0..<6000 where !dropped {
            volume = Double(i % 1000) / 1000
            try await d.set("org.mpris.MediaPlayer2.Player", "Volume", .double(volume))
            if i % 100 == 99 { dropped = d.log.contains("was dropped") }
        }
        try await d.waitFor("the stuck client dropped") { d.log.contains("was dropped") }
        // The one that reads saw the last change, and the other faces answer.
        let last = volume
        _ = try await events.waitFor("the last volume") { $0.type == "state" && ($0.state["volume"] as? Double) == last }
        #expect(try await d.get("org.mpris.MediaPlayer2.Player", "Volume").doubleValue == last)
        #expect(!events.isClosed)
    }
}

/// A WebSocket client that upgrades and then never reads a byte, with a receive buffer as small as the kernel allows.
final class StuckSocket: Sendable {
    let socket = LoopbackSocket(receiveBuffer: 2048)

    init(port: Int) throws {
        try #require(socket.connect(port: port))
        let sent = socket.send("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        try #require(sent > 0)
    }

    func close() { socket.close() }
}

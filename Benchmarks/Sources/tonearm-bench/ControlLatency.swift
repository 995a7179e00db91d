import DBus
import Foundation
import Synchronization

/// Keeps every signal of a subscription with the time it arrived, so latencies are taken from the arrival
/// time and not from when the measuring loop looks.
final class SignalRecorder: Sendable {
    /// Shared with the receiving task (a Mutex itself cannot be captured).
    private final class Store: Sendable {
        let received = Mutex<[(ContinuousClock.Instant, DBusSignal)]>([])
    }
    private let store = Store()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<DBusSignal>) {
        let store = self.store
        task = Task {
            for await signal in stream {
                let now = ContinuousClock.now
                store.received.withLock { $0.append((now, signal)) }
            }
        }
    }

    deinit { task.cancel() }

    var count: Int { store.received.withLock { $0.count } }

    /// The arrival time of the first signal at index ≥ `from` satisfying `matching`, polling every 0.5 ms; nil after `timeout`.
    func first(from: Int, timeout: Duration, matching: (DBusSignal) -> Bool) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let hit = store.received.withLock { list in list.dropFirst(from).first { matching($0.1) }?.0 }
            if let hit { return hit }
            try? await Task.sleep(for: .microseconds(500))
        }
        return nil
    }
}

/// Latency from a control call to the signal that announces its effect, as a panel widget sees it.
enum ControlLatency {
    static let signalTimeout = Duration.seconds(2)
    /// Time between two commands, so each starts from a settled player.
    static let settle = Duration.milliseconds(150)

    struct Figures: Sendable {
        /// From the call to its method return (what a media key's sender waits for).
        var playPauseReply: [Double] = []
        var playPause: [Double] = []
        var seekPlaying: [Double] = []
        var seekPaused: [Double] = []
        /// Seeks that got no Seeked signal within `signalTimeout`.
        var seekPlayingMissing = 0
        var seekPausedMissing = 0
        var setPositionPlaying: [Double] = []
        var setPositionPaused: [Double] = []
        var setPositionPlayingMissing = 0
        var setPositionPausedMissing = 0
    }

    /// `toggles` PlayPause calls (an even number, so it ends playing), each timed from the call to its reply and to the
    /// PropertiesChanged carrying PlaybackStatus; then `seeks` Seek calls while playing and `seeks` while paused,
    /// each timed from the call to Seeked. In ms.
    static func measure(_ session: Session, _ name: String, toggles: Int, seeks: Int) async throws -> Figures {
        let client = session.client
        let changed = SignalRecorder(try await client.subscribe(DBusMatchRule(
            sender: name, path: Session.mprisPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")))
        let seeked = SignalRecorder(try await client.subscribe(DBusMatchRule(
            sender: name, path: Session.mprisPath, interface: Session.playerInterface, member: "Seeked")))
        func call(_ member: String, _ arguments: [DBusValue] = []) async throws {
            _ = try await client.call(destination: name, path: Session.mprisPath, interface: Session.playerInterface,
                                      member: member, arguments: arguments)
        }
        let clock = ContinuousClock()
        var figures = Figures()

        for _ in 0..<toggles {
            try await Task.sleep(for: settle)
            let from = changed.count
            let start = clock.now
            try await call("PlayPause")
            figures.playPauseReply.append((clock.now - start).microseconds / 1000)
            let arrived = await changed.first(from: from, timeout: signalTimeout) {
                $0.arguments.count > 1 && $0.arguments[1].vardictValue?["PlaybackStatus"] != nil
            }
            if let arrived { figures.playPause.append((arrived - start).microseconds / 1000) }
        }

        /// Seek calls (relative), or SetPosition calls on the current track id (absolute), each timed to Seeked.
        func seek(_ count: Int, absolute: Bool = false) async throws -> ([Double], Int) {
            var times: [Double] = [], missing = 0
            let track = absolute ? try await currentTrackID(client, name) : nil
            for i in 0..<count {
                try await Task.sleep(for: settle)
                let from = seeked.count
                let start = clock.now
                if let track {
                    try await call("SetPosition", [.objectPath(track), .int64(i % 2 == 0 ? 20_000_000 : 10_000_000)])
                } else {
                    // Back and forth by 3 s, so the position stays inside the track.
                    try await call("Seek", [.int64(i % 2 == 0 ? 3_000_000 : -3_000_000)])
                }
                if let arrived = await seeked.first(from: from, timeout: signalTimeout, matching: { _ in true }) {
                    times.append((arrived - start).microseconds / 1000)
                } else {
                    missing += 1
                }
            }
            return (times, missing)
        }
        (figures.seekPlaying, figures.seekPlayingMissing) = try await seek(seeks)
        (figures.setPositionPlaying, figures.setPositionPlayingMissing) = try await seek(seeks, absolute: true)
        try await call("Pause")
        _ = try await session.waitForStatus(name, "Paused", timeout: .seconds(5))
        (figures.seekPaused, figures.seekPausedMissing) = try await seek(seeks)
        (figures.setPositionPaused, figures.setPositionPausedMissing) = try await seek(seeks, absolute: true)
        try await call("Play")
        return figures
    }

    /// The current track's mpris:trackid, which SetPosition must name.
    static func currentTrackID(_ client: DBusConnection, _ name: String) async throws -> String {
        let metadata = try await client.getProperty(destination: name, path: Session.mprisPath, interface: Session.playerInterface,
                                                    name: "Metadata").vardictValue ?? [:]
        guard let id = metadata["mpris:trackid"]?.stringValue, !id.isEmpty else {
            throw BenchError("\(name) has no mpris:trackid in Metadata")
        }
        return id
    }
}

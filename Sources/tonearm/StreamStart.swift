import DBus
import Glibc

/// A stream URL is queued before any server answered it (the daemon's player makes the only request): `play` waits
/// for the stream to be heard or to fail, so that a dead station is an error on the command line as it is in the log.
struct StreamStart {
    let client: PlayerClient

    /// Whether `play` waits for `uri`: a network stream.
    static func isStream(_ uri: String) -> Bool {
        let scheme = uri.prefix { $0 != ":" }.lowercased()
        return ["http", "https", "icy", "icyx"].contains(scheme)
    }

    /// What became of a track just started.
    enum Outcome: Sendable {
        case heard
        case failed(name: String, message: String)
        /// The daemon left the bus first (it exits when its audio output cannot be built, or was stopped).
        case daemonLeft
        case undecided
    }

    /// How long `tonearm play URL` waits for a stream to be heard or to fail: 30 s (`TONEARM_STREAM_WAIT` seconds, for
    /// tests).
    static var waitLimit: Duration {
        guard let text = getenv("TONEARM_STREAM_WAIT").map({ String(cString: $0) }), let seconds = Double(text), seconds > 0 else {
            return .seconds(30)
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Subscribes now (before the track is started), then `outcome(of:)` waits for the first sign.
    func watch() -> Watch {
        let (events, continuation) = AsyncStream<(String?, Outcome)>.makeStream()
        let failures = client.connection.signals(matching: DBusMatchRule(
            sender: PlayerClient.busName, path: PlayerClient.objectPath, interface: PlayerClient.Interface.tonearm, member: "TrackFailed"))
        let ticks = client.ticks()
        let levels = client.bufferingChanges()
        let departure = client.daemonDeparture()
        let feeders = [
            Task {
                for await signal in failures {
                    let a = signal.arguments.map(\.unwrapped)
                    guard a.count >= 4, let id = a[0].looseString else { continue }
                    continuation.yield((id, .failed(name: a[2].looseString ?? "", message: a[3].looseString ?? "")))
                }
            },
            Task {
                // Heard: its position moves.
                for await tick in ticks where tick.position > 0 { continuation.yield((tick.trackId, .heard)) }
            },
            Task {
                // Heard: its buffer filled.
                for await level in levels where level.percent == 100 { continuation.yield((level.trackId, .heard)) }
            },
            Task {
                // No track's: it ends every wait.
                for await _ in departure { continuation.yield((nil, .daemonLeft)) }
            },
        ]
        return Watch(events: events, stop: { for feeder in feeders { feeder.cancel() }; continuation.finish() })
    }

    struct Watch: Sendable {
        let events: AsyncStream<(String?, Outcome)>
        let stop: @Sendable () -> Void

        /// The first sign for `trackId`, or `.undecided` after `limit`.
        func outcome(of trackId: String, limit: Duration) async -> Outcome {
            let timer = Task {
                try? await Task.sleep(for: limit)
                stop()
            }
            defer {
                timer.cancel()
                stop()
            }
            for await (id, outcome) in events where id == nil || id == trackId { return outcome }
            return .undecided
        }
    }
}

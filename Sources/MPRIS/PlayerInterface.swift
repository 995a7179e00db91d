import DBus
import Synchronization
import TonearmCore

/// org.mpris.MediaPlayer2.Player over the `Player` actor.
struct PlayerInterface: DBusInterfaceHandler {
    private let declared = Contract("org.mpris.MediaPlayer2.Player")
    var interface: DBusInterfaceDescription { declared.description }
    let player: Player
    private let encoded = EncodedSnapshot()

    /// Runs a transport command, answering its call as soon as the new status is published (`CommandTaken`), not
    /// after the engine's state change has started.
    private func answeredWhenTaken(_ command: () async -> Void) async {
        await CommandTaken.answering(DBusCurrentCall.answerNow, command)
    }

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged {
            switch method {
            case "Next": await player.next()
            case "Previous": await player.previous()
            case "Pause": await answeredWhenTaken { await player.pause() }
            case "PlayPause":
                // The spec: with CanPause false, PlayPause has no effect and raises an error.
                guard player.channel.read(\.snapshot.canPause) else {
                    throw TonearmError(.nothingToPlay, "nothing to play or pause: the queue is empty")
                }
                await answeredWhenTaken { await player.playPause() }
            case "Stop": await answeredWhenTaken { await player.stop() }
            case "Play": await answeredWhenTaken { await player.play() }
            case "Seek": await player.seek(by: a[0].int64Value ?? 0)
            case "SetPosition":
                await player.setPosition(TrackID(path: a[0].stringValue ?? ""), a[1].int64Value ?? -1)
            case "OpenUri":
                let uri = a[0].stringValue ?? ""
                guard let scheme = uri.split(separator: ":", maxSplits: 1).first, uri.contains(":"),
                      MediaPlayer2Interface.uriSchemes.contains(scheme.lowercased()) else {
                    throw TonearmError.unsupportedScheme(uri)
                }
                try await player.openURI(uri)
            default: throw DBusError.unknownMethod(method)
            }
            return []
        }
    }

    /// Play, Pause and PlayPause carried out on the bus thread while the Player is idle and the command only moves
    /// between playing and paused, or a Play while playing, busy or not (`Player.toggleAtOnce`): the reply then needs
    /// no hop to a task and back. As on the usual path, the new status is published before the reply goes. Stop is
    /// not: resetting the pipeline waits for its streaming threads, and the bus thread would not answer reads meanwhile.
    func callAtOnce(_ method: String, _ arguments: [DBusValue], from sender: String) -> Result<[DBusValue], DBusError>? {
        let command: Player.Toggle
        switch method {
        case "Play": command = .play
        case "Pause": command = .pause
        // With CanPause false the usual path raises the spec's error.
        case "PlayPause" where player.channel.read(\.snapshot.canPause): command = .playPause
        default: return nil
        }
        // Answered as the status is published, before the signals are built and the engine moves.
        return CommandTaken.answering(DBusCurrentCall.answerNow) { player.toggleAtOnce(command) } ? .success([]) : nil
    }

    /// OpenUri of a network stream waits for the server's headers: every other call goes on meanwhile.
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool {
        method == "OpenUri" && MediaPlayer2Interface.reachesNetwork(arguments.compactMap(\.stringValue))
    }

    func get(_ property: String) async throws -> DBusValue {
        guard let value = currentValue(property) else { throw DBusError.unknownProperty(property) }
        return value
    }

    /// Answered on the bus thread from the published state, never waiting for the player: Position from its basis
    /// and the clock (progress bars poll it), the rest as encoded once per state (`playerctl status` and panel
    /// widgets read them all at once).
    func currentValue(_ property: String) -> DBusValue? {
        let state = player.state
        if property == "Position" { return .int64(state.position.now) }
        return encoded.properties(of: state)[property]
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        try await bridged {
            switch property {
            case "LoopStatus":
                guard let loop = value.stringValue.flatMap(LoopStatus.init(rawValue:)) else {
                    throw DBusError.invalidArgs("LoopStatus must be None, Track or Playlist")
                }
                await player.setLoop(loop)
            case "Shuffle": await player.setShuffle(value.boolValue ?? false)
            case "Volume":
                do { try await player.setVolume(value.doubleValue ?? .nan) } catch let e as TonearmError {
                    throw DBusError.invalidArgs(e.message)
                }
            case "Rate":
                do { try await player.setRate(value.doubleValue ?? .nan) } catch let e as TonearmError {
                    throw DBusError.invalidArgs(e.message)
                }
            default: throw DBusError.propertyReadOnly(property)
            }
        }
    }

    /// Every property but Position, as MPRIS types them.
    /// `metadata`: the snapshot's Metadata when the caller has it encoded already (the track did not change).
    static func properties(_ s: PlayerSnapshot, metadata: DBusValue? = nil) -> [String: DBusValue] {
        [
            "PlaybackStatus": .string(s.status.rawValue),
            "LoopStatus": .string(s.loop.rawValue),
            "Rate": .double(s.rate),
            "Shuffle": .bool(s.shuffle),
            "Metadata": metadata ?? MetadataEncoding.encode(s.current, lyrics: s.lyricsText),
            "Volume": .double(s.volume),
            "MinimumRate": .double(Player.minimumRate),
            "MaximumRate": .double(Player.maximumRate),
            "CanGoNext": .bool(s.canGoNext),
            "CanGoPrevious": .bool(s.canGoPrevious),
            "CanPlay": .bool(s.canPlay),
            "CanPause": .bool(s.canPause),
            "CanSeek": .bool(s.canSeek),
            "CanControl": .bool(true),
        ]
    }
}

/// The announced snapshot's properties, encoded once: a GetAll reads a dozen of them, each from the same snapshot.
private final class EncodedSnapshot: Sendable {
    private let last = Mutex<(revision: UInt64, snapshot: PlayerSnapshot, values: [String: DBusValue])?>(nil)

    /// The same revision is the same state, known without comparing snapshots; a publish that moved only the
    /// position basis (a seek, a tick) keeps the snapshot, and its encoding.
    func properties(of state: PlayerState) -> [String: DBusValue] {
        if let cached = last.withLock({ $0 }) {
            if cached.revision == state.revision { return cached.values }
            if cached.snapshot == state.snapshot {
                last.withLock { $0?.revision = state.revision }
                return cached.values
            }
        }
        let values = PlayerInterface.properties(state.snapshot)
        last.withLock { $0 = (state.revision, state.snapshot, values) }
        return values
    }
}

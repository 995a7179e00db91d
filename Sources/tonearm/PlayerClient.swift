import DBus
import Glibc

/// A thin typed wrapper over the daemon's D-Bus face: the only place that knows
/// the bus name, the object path and the interface names.
struct PlayerClient: Sendable {
    static let busName = "org.mpris.MediaPlayer2.tonearm"
    static let objectPath = "/org/mpris/MediaPlayer2"
    /// MPRIS's "no track" id.
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    enum Interface {
        static let root = "org.mpris.MediaPlayer2"
        static let player = "org.mpris.MediaPlayer2.Player"
        static let trackList = "org.mpris.MediaPlayer2.TrackList"
        static let tonearm = "org.tonearm.Player1"
        static let properties = "org.freedesktop.DBus.Properties"
        static let bus = "org.freedesktop.DBus"
    }

    let connection: DBusConnection

    // MARK: Connecting

    /// Connects to the session bus; a missing or unreachable bus is exit code 3.
    static func connect() throws -> PlayerClient {
        guard let address = getenv("DBUS_SESSION_BUS_ADDRESS"), address.pointee != 0 else {
            throw CLIFailure.unreachable(
                "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set "
                    + "(run tonearm inside a desktop session, or under dbus-run-session)")
        }
        do {
            return PlayerClient(connection: try DBusConnection.session())
        } catch let error as DBusError {
            throw CLIFailure.unreachable("cannot connect to the D-Bus session bus: \(error.message) (\(error.name))")
        }
    }

    /// Connects and checks that the daemon owns its name (without starting it).
    static func connectToRunningDaemon() async throws -> PlayerClient {
        let client = try connect()
        guard try await client.isDaemonRunning() else {
            throw CLIFailure.unreachable(
                "the Tonearm daemon is not running (nobody owns \(busName) on the session bus); "
                    + "`tonearm play` starts it")
        }
        return client
    }

    /// True when some process owns the daemon's bus name.
    func isDaemonRunning() async throws -> Bool {
        try await connection.nameHasOwner(Self.busName)
    }

    /// Starts tonearmd when nobody owns its bus name yet: through D-Bus activation when it is installed (so it
    /// runs as the session runs it, under systemd when there is one), else by spawning it.
    func ensureDaemonRunning() async throws {
        if try await isDaemonRunning() { return }
        let activatable = (try? await connection.call(destination: Interface.bus, path: "/org/freedesktop/DBus", interface: Interface.bus,
                                                      member: "ListActivatableNames"))?.first?.looseStrings ?? []
        if activatable.contains(Self.busName) {
            do {
                _ = try await connection.call(destination: Interface.bus, path: "/org/freedesktop/DBus", interface: Interface.bus,
                                              member: "StartServiceByName", arguments: [.string(Self.busName), .uint32(0)],
                                              timeout: .seconds(30))
                if try await isDaemonRunning() { return }
            } catch let error as DBusError {
                throw CLIFailure.unreachable("D-Bus could not start the installed tonearmd: \(error.message)")
            }
        }
        try await DaemonLauncher.start(waitingWith: self)
    }

    // MARK: org.mpris.MediaPlayer2.Player

    func play() async throws { try await callPlayer("Play") }
    func pause() async throws { try await callPlayer("Pause") }
    func playPause() async throws { try await callPlayer("PlayPause") }
    func stop() async throws { try await callPlayer("Stop") }
    func next() async throws { try await callPlayer("Next") }
    func previous() async throws { try await callPlayer("Previous") }

    /// Moves the position by `offset` microseconds (negative: backwards).
    func seek(by offset: Int64) async throws {
        try await callPlayer("Seek", [.int64(offset)])
    }

    /// Jumps to `position` microseconds into the track `trackId`.
    func setPosition(trackId: String, to position: Int64) async throws {
        try await callPlayer("SetPosition", [.objectPath(trackId), .int64(position)])
    }

    func openUri(_ uri: String) async throws {
        try await callPlayer("OpenUri", [.string(uri)])
    }

    /// All the Player interface's properties at once, as one snapshot.
    func state() async throws -> PlayerState {
        PlayerState(properties: try await connection.getAllProperties(
            destination: Self.busName, path: Self.objectPath, interface: Interface.player))
    }

    func metadata() async throws -> TrackMetadata {
        let value = try await playerProperty("Metadata")
        return TrackMetadata(value.unwrapped.vardictValue ?? [:])
    }

    /// The position in microseconds.
    func position() async throws -> Int64 {
        try await playerProperty("Position").looseInt64 ?? 0
    }

    /// The volume, 0…1.
    func volume() async throws -> Double {
        try await playerProperty("Volume").looseDouble ?? 0
    }

    func setVolume(_ volume: Double) async throws {
        try await connection.setProperty(
            destination: Self.busName, path: Self.objectPath, interface: Interface.player,
            name: "Volume", value: .double(volume))
    }

    func playerProperty(_ name: String) async throws -> DBusValue {
        try await connection.getProperty(
            destination: Self.busName, path: Self.objectPath, interface: Interface.player, name: name)
    }

    // MARK: org.tonearm.Player1

    /// Replaces the queue with `uris`; with `play`, starts the first. Returns the track ids.
    @discardableResult
    func replaceQueue(_ uris: [String], play: Bool) async throws -> [String] {
        trackIds(try await call(Interface.tonearm, "ReplaceQueue", [.stringArray(uris), .bool(play)]))
    }

    /// Appends `uris` to the queue. Returns the track ids.
    @discardableResult
    func enqueue(_ uris: [String]) async throws -> [String] {
        trackIds(try await call(Interface.tonearm, "Enqueue", [.stringArray(uris)]))
    }

    /// Inserts `uris` right after the current track. Returns the track ids.
    @discardableResult
    func enqueueNext(_ uris: [String]) async throws -> [String] {
        trackIds(try await call(Interface.tonearm, "EnqueueNext", [.stringArray(uris)]))
    }

    func clearQueue() async throws {
        try await call(Interface.tonearm, "Clear")
    }

    // MARK: Signals

    /// `org.tonearm.Player1.Tick`: every tick interval while playing, once on pause,
    /// once after each seek.
    func ticks() -> AsyncStream<Tick> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Self.busName, path: Self.objectPath, interface: Interface.tonearm, member: "Tick"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    if let tick = Tick(signal.arguments) { continuation.yield(tick) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// PropertiesChanged on the Player interface: the changed values and the
    /// names of the invalidated ones.
    func playerPropertyChanges() -> AsyncStream<PropertyChange> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Self.busName, path: Self.objectPath, interface: Interface.properties,
            member: "PropertiesChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    let arguments = signal.arguments.map(\.unwrapped)
                    guard arguments.count >= 2, arguments[0].looseString == Interface.player else { continue }
                    let changed = arguments[1].vardictValue ?? [:]
                    let invalidated = arguments.count > 2 ? arguments[2].looseStrings : []
                    continuation.yield(PropertyChange(changed: changed, invalidated: invalidated))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Yields once when the daemon's bus name loses its owner, then finishes.
    func daemonDeparture() -> AsyncStream<Void> {
        let signals = connection.signals(matching: DBusMatchRule(
            sender: Interface.bus, path: "/org/freedesktop/DBus", interface: Interface.bus,
            member: "NameOwnerChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    let arguments = signal.arguments.map(\.unwrapped)
                    guard arguments.count >= 3, arguments[0].looseString == Self.busName,
                          arguments[2].looseString?.isEmpty == true
                    else { continue }
                    continuation.yield()
                    break
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Plumbing

    private func callPlayer(_ member: String, _ arguments: [DBusValue] = []) async throws {
        try await call(Interface.player, member, arguments)
    }

    @discardableResult
    private func call(_ interface: String, _ member: String, _ arguments: [DBusValue] = [])
        async throws -> [DBusValue]
    {
        try await connection.call(
            destination: Self.busName, path: Self.objectPath, interface: interface,
            member: member, arguments: arguments)
    }

    private func trackIds(_ reply: [DBusValue]) -> [String] {
        reply.first?.looseStrings ?? []
    }
}

/// One `org.tonearm.Player1.Tick` signal.
struct Tick: Sendable, Equatable {
    var trackId: String
    /// Microseconds.
    var position: Int64
    /// Microseconds; 0 or less when unknown.
    var length: Int64

    init(trackId: String, position: Int64, length: Int64) {
        self.trackId = trackId
        self.position = position
        self.length = length
    }

    init?(_ arguments: [DBusValue]) {
        let arguments = arguments.map(\.unwrapped)
        guard arguments.count >= 3, let trackId = arguments[0].looseString,
              let position = arguments[1].looseInt64, let length = arguments[2].looseInt64
        else { return nil }
        self.init(trackId: trackId, position: position, length: length)
    }
}

/// One PropertiesChanged signal for the Player interface.
struct PropertyChange: Sendable {
    var changed: [String: DBusValue]
    var invalidated: [String]
}

/// The MPRIS metadata of one track.
struct TrackMetadata: Sendable, Equatable {
    var trackId: String?
    var title: String?
    var artists: [String] = []
    var album: String?
    var url: String?
    var artUrl: String?
    /// Microseconds.
    var length: Int64?

    init() {}

    init(_ dictionary: [String: DBusValue]) {
        let id = dictionary["mpris:trackid"]?.looseString
        trackId = id == PlayerClient.noTrack ? nil : id
        title = dictionary["xesam:title"]?.looseString
        artists = dictionary["xesam:artist"]?.looseStrings ?? []
        album = dictionary["xesam:album"]?.looseString
        url = dictionary["xesam:url"]?.looseString
        artUrl = dictionary["mpris:artUrl"]?.looseString
        length = dictionary["mpris:length"]?.looseInt64.flatMap { $0 > 0 ? $0 : nil }
    }

    /// What to call the track: its title, else its file name, else its URL.
    var displayTitle: String? {
        if let title, !title.isEmpty { return title }
        guard let url, !url.isEmpty else { return nil }
        let name = url.split(separator: "/").last.map(String.init) ?? url
        return MediaLocation.percentDecoded(name)
    }

    /// "Artist — Title", "Title", or nil.
    var displayName: String? {
        guard let title = displayTitle else { return artists.isEmpty ? nil : artists.joined(separator: ", ") }
        return artists.isEmpty ? title : "\(artists.joined(separator: ", ")) — \(title)"
    }
}

/// A snapshot of the Player interface's properties.
struct PlayerState: Sendable {
    /// "Playing", "Paused" or "Stopped".
    var status = "Stopped"
    var metadata = TrackMetadata()
    /// Microseconds.
    var position: Int64 = 0
    /// 0…1.
    var volume: Double = 1
    /// "None", "Track" or "Playlist".
    var loop = "None"
    var shuffle = false
    var canSeek = false
    /// The network buffer's fill level, 0…100 (org.tonearm.Player1 Buffering; 100: not buffering).
    var buffering = 100

    init() {}

    init(properties: [String: DBusValue]) {
        apply(properties)
    }

    /// Takes over the values in `properties` (a GetAll reply or a PropertiesChanged).
    mutating func apply(_ properties: [String: DBusValue]) {
        for (name, value) in properties {
            switch name {
            case "PlaybackStatus": status = value.looseString ?? status
            case "Metadata": metadata = TrackMetadata(value.unwrapped.vardictValue ?? [:])
            case "Position": position = value.looseInt64 ?? position
            case "Volume": volume = value.looseDouble ?? volume
            case "LoopStatus": loop = value.looseString ?? loop
            case "Shuffle": shuffle = value.looseBool ?? shuffle
            case "CanSeek": canSeek = value.looseBool ?? canSeek
            default: break
            }
        }
    }
}

// MARK: - Lenient reading of D-Bus values

extension DBusValue {
    /// A string or object path (through variants).
    var looseString: String? {
        switch unwrapped {
        case .string(let string), .objectPath(let string), .signature(let string): return string
        default: return nil
        }
    }

    /// Any integer type (through variants), or a finite double rounded: players differ in what they send.
    var looseInt64: Int64? {
        if let v = int64Value { return v }
        if case .uint64 = unwrapped { return Int64.max }
        if let d = doubleValue, d.isFinite { return Int64(d.rounded()) }
        return nil
    }

    /// A double or any integer (through variants).
    var looseDouble: Double? {
        if case .double(let v) = unwrapped { return v }
        return looseInt64.map(Double.init)
    }

    var looseBool: Bool? {
        if case .bool(let v) = unwrapped { return v }
        return nil
    }

    /// An array of strings, or a single string as a one-element list.
    var looseStrings: [String] {
        if let single = looseString { return [single] }
        return unwrapped.arrayValue?.compactMap(\.looseString) ?? []
    }
}

// MARK: - The queue (MPRIS TrackList and org.tonearm.Player1)

extension PlayerClient {
    /// The queue's track ids, in order.
    func trackIds() async throws -> [String] {
        try await connection.getProperty(destination: Self.busName, path: Self.objectPath, interface: Interface.trackList,
                                         name: "Tracks").looseStrings
    }

    /// Metadata of the given tracks, in the daemon's order.
    func tracksMetadata(_ ids: [String]) async throws -> [TrackMetadata] {
        guard !ids.isEmpty else { return [] }
        let reply = try await connection.call(destination: Self.busName, path: Self.objectPath, interface: Interface.trackList,
                                              member: "GetTracksMetadata", arguments: [.objectPathArray(ids)])
        return (reply.first?.arrayValue ?? []).map { TrackMetadata($0.unwrapped.vardictValue ?? [:]) }
    }

    func moveTrack(_ id: String, after: String) async throws {
        _ = try await connection.call(destination: Self.busName, path: Self.objectPath, interface: Interface.tonearm,
                                      member: "MoveTrack", arguments: [.objectPath(id), .objectPath(after)])
    }

    func removeTrack(_ id: String) async throws {
        _ = try await connection.call(destination: Self.busName, path: Self.objectPath, interface: Interface.trackList,
                                      member: "RemoveTrack", arguments: [.objectPath(id)])
    }

    func goTo(_ id: String) async throws {
        _ = try await connection.call(destination: Self.busName, path: Self.objectPath, interface: Interface.trackList,
                                      member: "GoTo", arguments: [.objectPath(id)])
    }

    /// A property of org.tonearm.Player1 (ReplayGainMode, ReplayGain, TickInterval).
    func tonearmProperty(_ name: String) async throws -> DBusValue {
        try await connection.getProperty(destination: Self.busName, path: Self.objectPath, interface: Interface.tonearm, name: name)
    }

    func setTonearmProperty(_ name: String, _ value: DBusValue) async throws {
        try await connection.setProperty(destination: Self.busName, path: Self.objectPath, interface: Interface.tonearm,
                                         name: name, value: value)
    }

    func setPlayerProperty(_ name: String, _ value: DBusValue) async throws {
        try await connection.setProperty(destination: Self.busName, path: Self.objectPath, interface: Interface.player,
                                         name: name, value: value)
    }
}

import LibraryRecord
import DBus

/// A thin typed wrapper over the daemon's `org.tonearm.Library1` interface (same bus
/// name and object as the player, see `PlayerClient`).
struct LibraryClient: Sendable {
    static let interface = "org.tonearm.Library1"

    let connection: DBusConnection

    /// The player on the same connection, for queueing what the library found.
    var player: PlayerClient { PlayerClient(connection: connection) }

    /// Connects and checks that the daemon owns its name (without starting it): exit code 3 otherwise.
    static func connectToRunningDaemon() async throws -> LibraryClient {
        LibraryClient(connection: try await PlayerClient.connectToRunningDaemon().connection)
    }

    // MARK: Methods

    func artists() async throws -> [LibraryArtist] {
        try records(try await call("Artists")).map(LibraryArtist.init)
    }

    /// Albums by `artist` (album artist or track artist); "" for every album.
    func albums(artist: String) async throws -> [LibraryAlbum] {
        try records(try await call("Albums", [.string(artist)])).map(LibraryAlbum.init)
    }

    /// An album's tracks in disc and track order.
    func albumTracks(album: String, albumArtist: String) async throws -> [LibraryTrack] {
        try records(try await call("AlbumTracks", [.string(album), .string(albumArtist)])).map(LibraryTrack.init)
    }

    /// One page of the tracks matching `expression`; a bad expression is a D-Bus error from the daemon.
    func search(_ expression: String, offset: UInt32, limit: UInt32) async throws -> [LibraryTrack] {
        try records(try await call("Search", [.string(expression), .uint32(offset), .uint32(limit)]))
            .map(LibraryTrack.init)
    }

    /// Every track matching `expression` from `offset` on, fetched a page at a time (so
    /// that no limit has to mean "all").
    func searchAll(_ expression: String, offset: UInt32, pageSize: UInt32 = 500) async throws -> [LibraryTrack] {
        var tracks: [LibraryTrack] = []
        var next = offset
        var previousFirst: String?
        while true {
            let page = try await search(expression, offset: next, limit: pageSize)
            if let first = page.first?.path, first == previousFirst {
                throw CLIFailure.refused("the daemon answered Search with the same page twice (does it ignore Offset?)")
            }
            previousFirst = page.first?.path
            tracks += page
            guard page.count == Int(pageSize) else { break }
            let (sum, overflow) = next.addingReportingOverflow(pageSize)
            if overflow { break }
            next = sum
        }
        return tracks
    }

    /// Today's pick, or nil when the library is empty.
    func randomTrack() async throws -> LibraryTrack? {
        let reply = try await call("RandomTrack")
        guard let first = reply.first else { throw unexpected("RandomTrack", reply) }
        guard let dictionary = first.unwrapped.vardictValue else { throw unexpected("RandomTrack", reply) }
        return dictionary.isEmpty ? nil : LibraryTrack(dictionary)
    }

    /// Today's pick (or `day`'s), nil when the library is empty.
    func todaysPick(day: String = "") async throws -> LibraryTrack? {
        let reply = try await call("TodaysPick", [.string(day)])
        guard let dictionary = reply.first?.unwrapped.vardictValue else { throw unexpected("TodaysPick", reply) }
        return dictionary.isEmpty ? nil : LibraryTrack(dictionary)
    }

    /// Starts a rescan; progress and the result come as signals (see `scanEvents()`).
    func scan() async throws {
        try await call("Scan")
    }

    /// Library1.LoudnessStatus.
    func loudnessStatus() async throws -> (tagged: Int, measured: Int, pending: Int, failed: Int, running: Bool) {
        let reply = try await call("LoudnessStatus")
        guard reply.count >= 5 else { throw unexpected("LoudnessStatus", reply) }
        func count(_ i: Int) -> Int { Int(reply[i].looseInt64 ?? 0) }
        return (count(0), count(1), count(2), count(3), reply[4].looseBool ?? false)
    }

    /// Library1.WriteLoudnessTags.
    func writeLoudnessTags() async throws -> (written: Int, failures: [LibraryFailure]) {
        let reply = try await call("WriteLoudnessTags")
        guard reply.count >= 2 else { throw unexpected("WriteLoudnessTags", reply) }
        let failures: [LibraryFailure] = (reply[1].arrayValue ?? []).compactMap { item in
            guard case .structure(let fields) = item.unwrapped, fields.count >= 2,
                  let path = fields[0].looseString, let reason = fields[1].looseString else { return nil }
            return LibraryFailure(path: path, reason: reason)
        }
        return (Int(reply[0].looseInt64 ?? 0), failures)
    }

    func failures() async throws -> [LibraryFailure] {
        let reply = try await call("Failures")
        guard let items = reply.first?.arrayValue else { throw unexpected("Failures", reply) }
        return items.compactMap { item in
            guard case .structure(let fields) = item.unwrapped, fields.count >= 2,
                  let path = fields[0].looseString, let reason = fields[1].looseString
            else { return nil }
            return LibraryFailure(path: path, reason: reason)
        }
    }

    // MARK: Properties

    /// The music folders being indexed.
    func folders() async throws -> [String] {
        try await property("Folders").looseStrings
    }

    /// Whether a scan is running.
    func isScanning() async throws -> Bool {
        try await property("Scanning").looseBool ?? false
    }

    // MARK: Signals

    /// ScanProgress and ScanFinished, in the order sent. Returns once the bus has confirmed
    /// the subscription, so a Scan called afterwards cannot outrun it.
    func scanEvents() async throws -> AsyncStream<ScanEvent> {
        let signals = try await connection.subscribe(DBusMatchRule(
            sender: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    if let event = ScanEvent(signal) { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Yields once when the daemon's bus name loses its owner, then finishes. Returns once
    /// the bus has confirmed the subscription.
    func daemonDeparture() async throws -> AsyncStream<Void> {
        let signals = try await connection.subscribe(DBusMatchRule(
            sender: PlayerClient.Interface.bus, path: "/org/freedesktop/DBus",
            interface: PlayerClient.Interface.bus, member: "NameOwnerChanged"))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    let arguments = signal.arguments.map(\.unwrapped)
                    // name, old owner, new owner: the owner we talked to is gone (or replaced).
                    guard arguments.count >= 3, arguments[0].looseString == PlayerClient.busName,
                          arguments[1].looseString?.isEmpty == false
                    else { continue }
                    continuation.yield()
                    break
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Rates a track (empty: the current one), 0…5 stars in halves; negative clears.
    func setRating(uri: String, stars: Double) async throws {
        try await call("SetRating", [.string(uri), .double(stars)])
    }

    /// The listening history's figures for a track (empty: the current one).
    func trackStats(uri: String) async throws -> [String: DBusValue] {
        let reply = try await call("TrackStats", [.string(uri)])
        guard let stats = reply.first?.unwrapped.vardictValue else { throw unexpected("TrackStats", reply) }
        return stats.mapValues(\.unwrapped)
    }

    /// Library tracks ranked by the history ("top", "recent", "forgotten"), each with its figures.
    func ranked(_ kind: String, limit: UInt32) async throws -> [(track: LibraryTrack, fields: [String: DBusValue])] {
        try records(try await call("Ranked", [.string(kind), .uint32(limit)])).map { (LibraryTrack($0), $0) }
    }

    /// Listens since `since` (Unix seconds, 0: all), newest first.
    func history(since: Int64, limit: UInt32) async throws -> [[String: DBusValue]] {
        try records(try await call("History", [.int64(since), .uint32(limit)]))
    }

    // MARK: Plumbing

    @discardableResult
    private func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(
            destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
            member: member, arguments: arguments)
    }

    private func property(_ name: String) async throws -> DBusValue {
        try await connection.getProperty(
            destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface, name: name)
    }

    /// The `aa{sv}` of a reply as dictionaries of unwrapped values.
    private func records(_ reply: [DBusValue]) throws -> [[String: DBusValue]] {
        guard let items = reply.first?.arrayValue else { throw unexpected("the library", reply) }
        return items.compactMap { $0.unwrapped.vardictValue }
    }

    private func unexpected(_ what: String, _ reply: [DBusValue]) -> CLIFailure {
        .refused("unexpected reply from \(what): \(reply.map(\.signature).joined(separator: ", "))")
    }
}

/// One entry of `Artists`.
struct LibraryArtist: Sendable {
    var name: String?
    var albums: Int64?
    var tracks: Int64?

    init(_ dictionary: [String: DBusValue]) {
        name = dictionary["name"]?.looseString
        albums = dictionary["albums"]?.int64Value
        tracks = dictionary["tracks"]?.int64Value
    }
}

/// One entry of `Albums`.
struct LibraryAlbum: Sendable {
    var title: String?
    var albumArtist: String?
    var year: Int64?
    var tracks: Int64?
    /// Seconds.
    var duration: Double?
    var artUrl: String?

    init(_ dictionary: [String: DBusValue]) {
        title = dictionary["title"]?.looseString
        albumArtist = dictionary["albumArtist"]?.looseString
        year = dictionary["year"]?.int64Value
        tracks = dictionary["tracks"]?.int64Value
        duration = dictionary["duration"]?.looseDouble
        artUrl = dictionary["artUrl"]?.looseString
    }
}

/// One track of `AlbumTracks`, `Search` or `RandomTrack`: the library's own record, read leniently (a field the
/// daemon leaves out is empty).
extension LibraryTrack {
    init(_ dictionary: [String: DBusValue]) {
        self.init(path: dictionary["path"]?.looseString ?? "", uri: dictionary["uri"]?.looseString ?? "",
                  title: dictionary["title"]?.looseString ?? "", artist: dictionary["artist"]?.looseString ?? "",
                  album: dictionary["album"]?.looseString ?? "", albumArtist: dictionary["albumArtist"]?.looseString ?? "",
                  genre: dictionary["genre"]?.looseString, year: dictionary["year"]?.int64Value.map { Int($0) },
                  trackNumber: dictionary["trackNumber"]?.int64Value.map { Int($0) },
                  discNumber: dictionary["discNumber"]?.int64Value.map { Int($0) },
                  duration: dictionary["duration"]?.looseDouble ?? 0, hasCover: dictionary["artUrl"]?.looseString != nil,
                  artUrl: dictionary["artUrl"]?.looseString)
    }

    /// What to queue: the track's URI, else a file:// URI made from its path.
    var playableURI: String? {
        if !uri.isEmpty { return uri }
        if path.hasPrefix("/") { return MediaLocation.fileURI(forAbsolutePath: path) }
        return nil
    }
}

/// One entry of `Failures`.
struct LibraryFailure: Sendable {
    var path: String
    var reason: String
}

/// A library signal about a scan.
enum ScanEvent: Sendable, Equatable {
    case progress(done: UInt32, total: UInt32)
    case finished(ScanSummary)

    init?(_ signal: DBusSignal) {
        let numbers = signal.arguments.map { $0.int64Value.map { UInt32(clamping: $0) } }
        switch signal.member {
        case "ScanProgress":
            guard numbers.count >= 2, let done = numbers[0], let total = numbers[1] else { return nil }
            self = .progress(done: done, total: total)
        case "ScanFinished":
            guard numbers.count >= 4, let added = numbers[0], let updated = numbers[1],
                  let removed = numbers[2], let failed = numbers[3]
            else { return nil }
            self = .finished(ScanSummary(added: added, updated: updated, removed: removed, failed: failed))
        default:
            return nil
        }
    }
}

/// The counts of `ScanFinished`.
struct ScanSummary: Sendable, Equatable {
    var added: UInt32
    var updated: UInt32
    var removed: UInt32
    var failed: UInt32
}

import DBus
import Foundation
import TonearmCore

/// The name of org.tonearm.Library1.
enum LibraryInterfaceName {
    static let name = "org.tonearm.Library1"
}

/// org.tonearm.Library1 over a library plugin's Swift API.
struct LibraryInterface<Library: LibraryAPI>: DBusInterfaceHandler {
    static var name: String { LibraryInterfaceName.name }
    private let declared = Contract(LibraryInterfaceName.name)
    var interface: DBusInterfaceDescription { declared.description }
    let library: Library
    /// For the current track and to show a rating at once in its metadata.
    var player: Player?
    var folders: [URL] { library.folders }

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged(otherwise: .libraryFailed) {
            switch method {
            case "Artists":
                let artists = try await library.artists()
                return [.array(element: "a{sv}", artists.map {
                    .vardict(["name": .string($0.name), "albums": .uint32(UInt32(clamping: $0.albumCount)),
                              "tracks": .uint32(UInt32(clamping: $0.trackCount))])
                })]
            case "Albums":
                let artist = a[0].stringValue ?? ""
                let albums = try await library.albums(artist: artist.isEmpty ? nil : artist)
                return [.array(element: "a{sv}", albums.map(Self.encode))]
            case "AlbumTracks":
                let artist = a[1].stringValue ?? ""
                let tracks = try await library.tracks(album: a[0].stringValue ?? "", albumArtist: artist.isEmpty ? nil : artist)
                return [.array(element: "a{sv}", tracks.map { Self.encode($0) })]
            case "Search":
                let limit = Int(a[2].int64Value ?? 0)
                let tracks = try await library.search(query: a[0].stringValue ?? "", offset: Int(a[1].int64Value ?? 0), limit: limit == 0 ? 100 : min(limit, 10_000))
                return [.array(element: "a{sv}", tracks.map { Self.encode($0) })]
            case "RandomTrack":
                return [try await library.randomTrack().map { Self.encode($0) } ?? .vardict([:])]
            case "TodaysPick":
                let day = a[0].stringValue ?? ""
                return [try await library.todaysPick(day: day.isEmpty ? TodaysPick.today() : day).map { Self.encode($0) } ?? .vardict([:])]
            case "Scan":
                // The answer comes as ScanProgress/ScanFinished signals; a long scan must not time the call out.
                Task { try? await library.rescan() }
                return []
            case "LoudnessStatus":
                let c = try await library.loudnessCounts()
                return [.uint32(UInt32(c.tagged)), .uint32(UInt32(c.measured)), .uint32(UInt32(c.pending)),
                        .uint32(UInt32(c.failed)), .bool(c.running)]
            case "WriteLoudnessTags":
                let report = try await library.writeMeasuredGains()
                return [.uint32(UInt32(report.written)),
                        .array(element: "(ss)", report.failures.map { .structure([.string($0.path), .string($0.reason)]) })]
            case "SetRating":
                let stars = a[1].doubleValue ?? -1
                guard stars.isFinite, stars <= 5 else { throw TonearmError.invalidValue("a rating is 0 to 5 stars, in halves") }
                let halfStars = stars < 0 ? nil : Int((stars * 2).rounded())
                try await rate(a[0].stringValue ?? "", halfStars: halfStars)
                return []
            case "TrackStats":
                let stats = try await library.stats(uri: try await trackURI(a[0].stringValue ?? ""))
                return [Self.encode(stats ?? TrackStats())]
            case "Ranked":
                let kind = a[0].stringValue ?? ""
                guard let ranking = HistoryRanking(rawValue: kind) else {
                    throw TonearmError.invalidValue("Kind must be top, recent or forgotten, not \(kind)")
                }
                let limit = Int(a[1].int64Value ?? 0)
                let ranked = try await library.ranked(ranking, limit: limit == 0 ? 100 : min(limit, 10_000))
                return [.array(element: "a{sv}", ranked.map { Self.encode($0.track, stats: $0.stats) })]
            case "History":
                let since = a[0].int64Value ?? 0
                let limit = Int(a[1].int64Value ?? 0)
                let listens = try await library.listens(since: since > 0 ? Date(timeIntervalSince1970: Double(since)) : nil,
                                                        limit: limit == 0 ? 100 : min(limit, 100_000))
                return [.array(element: "a{sv}", listens.map(Self.encode))]
            case "Failures":
                let failures = try await library.failures()
                return [.array(element: "(ss)", failures.map { .structure([.string($0.path), .string($0.reason)]) })]
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    /// The URI named, or the current track's for "".
    private func trackURI(_ uri: String) async throws -> String {
        guard uri.isEmpty else { return uri }
        guard let current = player?.state.snapshot.current else {
            throw TonearmError(.nothingPlaying, "there is no current track")
        }
        return current.uri
    }

    private func rate(_ uri: String, halfStars: Int?) async throws {
        if uri.isEmpty, let player {
            _ = try await player.rateCurrent(halfStars: halfStars)
        } else {
            _ = try await library.setRating(uri: uri, halfStars: halfStars)
            await player?.refreshStats(uri: uri)
        }
    }

    static func encode(_ stats: TrackStats) -> DBusValue {
        var d: [String: DBusValue] = ["playCount": .uint32(UInt32(clamping: stats.playCount)),
                                      "skipCount": .uint32(UInt32(clamping: stats.skipCount))]
        if let date = stats.firstPlayed { d["firstPlayed"] = .int64(Int64(date.timeIntervalSince1970)) }
        if let date = stats.lastPlayed { d["lastPlayed"] = .int64(Int64(date.timeIntervalSince1970)) }
        if let rating = stats.rating { d["rating"] = .double(Double(rating) / 2) }
        return .vardict(d)
    }

    static func encode(_ listen: Listen) -> DBusValue {
        var d: [String: DBusValue] = ["uri": .string(listen.uri), "artists": .stringArray(listen.artists),
                                      "startedAt": .int64(Int64(listen.startedAt.timeIntervalSince1970)), "heard": .double(listen.heard)]
        if let title = listen.title { d["title"] = .string(title) }
        if let album = listen.album { d["album"] = .string(album) }
        return .vardict(d)
    }

    func get(_ property: String) async throws -> DBusValue {
        switch property {
        case "Folders": return .stringArray(folders.map(\.path))
        case "Scanning": return .bool(library.isScanning)
        default: throw DBusError.unknownProperty(property)
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.propertyReadOnly(property)
    }

    static func encode(_ album: Library.Album) -> DBusValue {
        var d: [String: DBusValue] = [
            "title": .string(album.title), "albumArtist": .string(album.albumArtist),
            "tracks": .uint32(UInt32(clamping: album.trackCount)), "duration": .double(album.totalDuration),
        ]
        if let year = album.year { d["year"] = .int32(Int32(clamping: year)) }
        if let art = album.artUrl { d["artUrl"] = .string(art) }
        return .vardict(d)
    }

    static func encode(_ t: LibraryTrack, stats: TrackStats? = nil) -> DBusValue {
        var d: [String: DBusValue] = [
            "path": .string(t.path), "uri": .string(t.uri), "title": .string(t.title), "artist": .string(t.artist),
            "album": .string(t.album), "albumArtist": .string(t.albumArtist), "duration": .double(t.duration),
        ]
        if let g = t.genre { d["genre"] = .string(g) }
        if let y = t.year { d["year"] = .int32(Int32(clamping: y)) }
        if let n = t.trackNumber { d["trackNumber"] = .int32(Int32(clamping: n)) }
        if let n = t.discNumber { d["discNumber"] = .int32(Int32(clamping: n)) }
        if let art = t.artUrl { d["artUrl"] = .string(art) }
        if let stats {
            d["playCount"] = .uint32(UInt32(clamping: stats.playCount))
            if let last = stats.lastPlayed { d["lastPlayed"] = .int64(Int64(last.timeIntervalSince1970)) }
            if let rating = stats.rating { d["rating"] = .double(Double(rating) / 2) }
        }
        return .vardict(d)
    }

    /// Forwards the library's scan events as Library1 signals (subscribed now, forwarded once started).
    static func forwarder(_ library: Library, on connection: DBusConnection, path: String) -> @Sendable () -> Task<Void, Never> {
        let subscription = library.events.subscribe()
        return {
            Task {
                defer { subscription.cancel() }
                for await item in subscription {
                    switch item.event.scanSignal {
                    case .progress(let done, let total):
                        connection.emitSignal(path: path, interface: name, member: "ScanProgress",
                                              arguments: [.uint32(UInt32(clamping: done)), .uint32(UInt32(clamping: total))])
                    case .finished(let added, let updated, let removed, let failed):
                        connection.emitSignal(path: path, interface: name, member: "ScanFinished",
                                              arguments: [added, updated, removed, failed].map { .uint32(UInt32(clamping: $0)) })
                    case nil:
                        break
                    }
                }
            }
        }
    }
}

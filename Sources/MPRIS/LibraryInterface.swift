import DBus
import Foundation
import LocalLibrary
import TonearmCore

/// org.tonearm.Library1 over the LocalLibrary plugin's Swift API.
struct LibraryInterface: DBusInterfaceHandler {
    static let name = "org.tonearm.Library1"
    let interface = contract(LibraryInterface.name)
    let library: LocalLibrary
    let folders: [URL]

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged(otherwise: "org.tonearm.Error.LibraryFailed") {
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
                return [.array(element: "a{sv}", tracks.map(Self.encode))]
            case "Search":
                let predicates = try SearchPredicate.parse(a[0].stringValue ?? "")
                let limit = Int(a[2].int64Value ?? 0)
                let tracks = try await library.search(predicates, offset: Int(a[1].int64Value ?? 0), limit: limit == 0 ? 100 : min(limit, 10_000))
                return [.array(element: "a{sv}", tracks.map(Self.encode))]
            case "RandomTrack":
                return [try await library.randomTrack().map(Self.encode) ?? .vardict([:])]
            case "Scan":
                // The answer comes as ScanProgress/ScanFinished signals; a long scan must not time the call out.
                Task { _ = try? await library.scan() }
                return []
            case "Failures":
                let failures = try await library.failures()
                return [.array(element: "(ss)", failures.map { .structure([.string($0.path), .string($0.reason)]) })]
            default:
                throw DBusError.unknownMethod(method)
            }
        }
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

    static func encode(_ album: AlbumSummary) -> DBusValue {
        var d: [String: DBusValue] = [
            "title": .string(album.title), "albumArtist": .string(album.albumArtist),
            "tracks": .uint32(UInt32(clamping: album.trackCount)), "duration": .double(album.totalDuration),
        ]
        if let year = album.year { d["year"] = .int32(Int32(clamping: year)) }
        if let art = album.artUrl { d["artUrl"] = .string(art) }
        return .vardict(d)
    }

    static func encode(_ t: LibraryTrack) -> DBusValue {
        var d: [String: DBusValue] = [
            "path": .string(t.path), "uri": .string(t.uri), "title": .string(t.title), "artist": .string(t.artist),
            "album": .string(t.album), "albumArtist": .string(t.albumArtist), "duration": .double(t.duration),
        ]
        if let g = t.genre { d["genre"] = .string(g) }
        if let y = t.year { d["year"] = .int32(Int32(clamping: y)) }
        if let n = t.trackNumber { d["trackNumber"] = .int32(Int32(clamping: n)) }
        if let n = t.discNumber { d["discNumber"] = .int32(Int32(clamping: n)) }
        if let art = t.artUrl { d["artUrl"] = .string(art) }
        return .vardict(d)
    }
}

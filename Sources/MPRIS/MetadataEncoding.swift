import DBus
import Foundation
import TonearmCore

/// MPRIS metadata maps (a{sv}) built from tracks.
enum MetadataEncoding {
    /// `lyrics`: the track's lyrics as plain text (`xesam:asText`), when known.
    static func encode(_ track: Track?, lyrics: String? = nil) -> DBusValue {
        guard let track else { return .vardict(["mpris:trackid": .objectPath(TrackID.noTrack.path)]) }
        let m = track.metadata
        var d: [String: DBusValue] = [
            "mpris:trackid": .objectPath(track.id.path),
            "xesam:url": .string(m.url),
        ]
        if let length = m.length { d["mpris:length"] = .int64(length) }
        if let art = m.artUrl { d["mpris:artUrl"] = .string(art) }
        if let title = m.title { d["xesam:title"] = .string(title) }
        if !m.artists.isEmpty { d["xesam:artist"] = .stringArray(m.artists) }
        // A radio station's name where widgets show an album, and apart under its own key.
        if let album = m.album ?? m.station { d["xesam:album"] = .string(album) }
        if let station = m.station { d["tonearm:station"] = .string(station) }
        if !m.albumArtists.isEmpty { d["xesam:albumArtist"] = .stringArray(m.albumArtists) }
        if let n = m.trackNumber { d["xesam:trackNumber"] = .int32(Int32(clamping: n)) }
        if let n = m.discNumber { d["xesam:discNumber"] = .int32(Int32(clamping: n)) }
        if !m.genres.isEmpty { d["xesam:genre"] = .stringArray(m.genres) }
        if let lyrics { d["xesam:asText"] = .string(lyrics) }
        if let stats = m.stats {
            d["xesam:useCount"] = .int32(Int32(clamping: stats.playCount))
            if let date = stats.firstPlayed { d["xesam:firstUsed"] = .string(iso8601(date)) }
            if let date = stats.lastPlayed { d["xesam:lastUsed"] = .string(iso8601(date)) }
            // Half stars 0…10 as xesam's 0…1.
            if let rating = stats.rating { d["xesam:userRating"] = .double(Double(rating) / 10) }
        }
        return .vardict(d)
    }

    /// A date as xesam's dates are written: ISO 8601, UTC.
    static func iso8601(_ date: Date) -> String { DateText.iso8601UTC(date) }
}

extension TonearmError {
    /// The same error as a D-Bus error named `org.tonearm.Error.<Reason>`.
    var dbus: DBusError { DBusError(name: name, message: message) }
}

/// Runs a player call, turning Tonearm errors into named D-Bus errors.
/// Any other error becomes `fallback` (by default the DBus module's own Failed).
func bridged<T: Sendable>(otherwise fallback: TonearmError.Reason? = nil, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as TonearmError {
        throw error.dbus
    } catch let error as DBusError {
        throw error
    } catch {
        guard let fallback else { throw error }
        throw TonearmError(fallback, "\(error)").dbus
    }
}

extension Array where Element == DBusValue {
    /// The argument at `index`; the DBus module already checked the signature.
    subscript(checked index: Int) -> DBusValue { self[index] }
}

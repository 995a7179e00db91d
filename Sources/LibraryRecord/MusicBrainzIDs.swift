import Foundation

/// The MusicBrainz identifiers a file's tags carry (as Picard writes them), for scrobbling.
public struct MusicBrainzIDs: Sendable, Codable, Equatable {
    /// The recording (MUSICBRAINZ_TRACKID: Picard's "MusicBrainz Track Id" is the recording's id).
    public var recording: String?
    /// The track on the release (MUSICBRAINZ_RELEASETRACKID).
    public var track: String?
    /// The release (MUSICBRAINZ_ALBUMID).
    public var release: String?
    /// The release group (MUSICBRAINZ_RELEASEGROUPID).
    public var releaseGroup: String?
    /// The track's artists (MUSICBRAINZ_ARTISTID, one or several).
    public var artists: [String]

    public init(recording: String? = nil, track: String? = nil, release: String? = nil, releaseGroup: String? = nil,
                artists: [String] = []) {
        self.recording = recording
        self.track = track
        self.release = release
        self.releaseGroup = releaseGroup
        self.artists = artists
    }

    public var isEmpty: Bool { recording == nil && track == nil && release == nil && releaseGroup == nil && artists.isEmpty }

    /// The tag keys read, as TagLib's property map names them (ID3v2 TXXX/UFID frames, Vorbis comments, MP4 atoms).
    public static let tagKeys = ["MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID", "MUSICBRAINZ_ALBUMID",
                                 "MUSICBRAINZ_RELEASEGROUPID", "MUSICBRAINZ_ARTISTID"]

    /// The ids in a file's tag fields (TagLib's property map); nil when there are none. A value that is not a UUID is
    /// left out (a garbled tag is not sent to a server that would refuse the whole listen for it).
    public init?(tagFields fields: [String: [String]]) {
        func one(_ key: String) -> String? { fields[key]?.lazy.flatMap(Self.uuids).first }
        self.init(recording: one("MUSICBRAINZ_TRACKID"), track: one("MUSICBRAINZ_RELEASETRACKID"),
                  release: one("MUSICBRAINZ_ALBUMID"), releaseGroup: one("MUSICBRAINZ_RELEASEGROUPID"),
                  artists: Self.unique((fields["MUSICBRAINZ_ARTISTID"] ?? []).flatMap(Self.uuids)))
        if isEmpty { return nil }
    }

    /// The UUIDs in one tag value, lower-case: taggers put several artists in one value separated by "; ", "/" or ",".
    static func uuids(_ value: String) -> [String] {
        value.split(whereSeparator: { $0 == ";" || $0 == "/" || $0 == "," || $0 == "\u{0}" }).compactMap { part in
            let text = part.trimmingCharacters(in: .whitespaces)
            return UUID(uuidString: text) != nil ? text.lowercased() : nil
        }
    }

    private static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// As one index column: JSON, nil when there is nothing.
    public var stored: String? {
        guard !isEmpty, let data = try? JSONEncoder().encode(self) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// From the index column.
    public init?(stored: String?) {
        guard let stored, let ids = try? JSONDecoder().decode(Self.self, from: Data(stored.utf8)), !ids.isEmpty else { return nil }
        self = ids
    }
}

import Foundation
import TagFields
import TestSupport
import Testing
import TonearmCore
@testable import LocalLibrary

/// MusicBrainz ids into the index (migration v5-musicbrainz) and into what the player plays, for scrobbling: read from
/// the tags at scan time (FLAC and MP3, whose ID3v2 keeps them in TXXX and UFID frames), and from a file outside the
/// music folders when it is played.
@Suite struct MusicBrainzIndexTests {
    static let ids = MusicBrainzIDs(recording: "0b4a1bb5-8a4e-4f4a-9c3c-2d7d5c2d2a11", track: "1c5b2cc6-9b5f-4a5b-8d4d-3e8e6d3e3b22",
                                    release: "2d6c3dd7-ac60-4b6c-9e5e-4f9f7e4f4c33", releaseGroup: "3e7d4ee8-bd71-4c7d-af6f-50a08f505d44",
                                    artists: ["4f8e5ff9-ce82-4d8e-b070-61b19a616e55", "5a9f6a0a-df93-4e9f-8181-72c2ab727f66"])
    static let fields: [(key: String, value: String)] = [
        ("MUSICBRAINZ_TRACKID", ids.recording!), ("MUSICBRAINZ_RELEASETRACKID", ids.track!), ("MUSICBRAINZ_ALBUMID", ids.release!),
        ("MUSICBRAINZ_RELEASEGROUPID", ids.releaseGroup!), ("MUSICBRAINZ_ARTISTID", ids.artists.joined(separator: "; ")),
    ]

    @Test(arguments: [Media.Format.flac, .mp3])
    func idsFromTagsAreIndexedAndPlayed(_ format: Media.Format) async throws {
        let fixture = Fixture()
        let library = try fixture.open()
        let tagged = fixture.url("tagged.\(format.rawValue)"), plain = fixture.url("plain.\(format.rawValue)")
        try FileManager.default.copyItem(at: try await Media.shared.file(format, tags: [("title", "Tagged")]), to: tagged)
        try FileManager.default.copyItem(at: try await Media.shared.file(format, tags: [("title", "Plain")]), to: plain)
        try TagFields.write(tagged.path, Self.fields)
        _ = try await library.scan()
        #expect(try await library.track(at: tagged)?.musicBrainz == Self.ids)
        #expect(try await library.track(at: plain)?.musicBrainz == nil)
        #expect(try await library.resolve(tagged).musicBrainz == Self.ids)

        // A file outside the music folders: its tags are read when it is enriched.
        let outside = TemporaryDirectory("tonearm-mbid")
        let copy = outside.file("outside.\(format.rawValue)")
        try FileManager.default.copyItem(at: tagged, to: copy)
        let enriched = await library.enrich(TrackMetadata(url: copy.absoluteString))
        #expect(enriched.musicBrainz == Self.ids)
    }
}

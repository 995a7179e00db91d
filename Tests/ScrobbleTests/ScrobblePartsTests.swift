import Foundation
import Testing
import TonearmCore
@testable import Scrobble

/// The journal, the payload, the settings and the MusicBrainz ids from tags.
@Suite struct ScrobblePartsTests {
    static let ids = MusicBrainzIDs(recording: "0b4a1bb5-8a4e-4f4a-9c3c-2d7d5c2d2a11", track: "1c5b2cc6-9b5f-4a5b-8d4d-3e8e6d3e3b22",
                                    release: "2d6c3dd7-ac60-4b6c-9e5e-4f9f7e4f4c33", releaseGroup: "3e7d4ee8-bd71-4c7d-af6f-50a08f505d44",
                                    artists: ["4f8e5ff9-ce82-4d8e-b070-61b19a616e55", "5a9f6a0a-df93-4e9f-8181-72c2ab727f66"])

    func folder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scrobble-journal-\(UUID().uuidString)")
        return url
    }

    @Test func theJournalKeepsWhatIsPendingAndWhatWasUnderWay() throws {
        let dir = folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = QueuedListen(id: "a", listen: ScrobbleListen(listenedAt: 1, artist: "A", title: "1", musicBrainz: Self.ids))
        let b = QueuedListen(id: "b", listen: ScrobbleListen(listenedAt: 2, artist: "A", title: "2"))
        let c = QueuedListen(id: "c", listen: ScrobbleListen(listenedAt: 3, artist: "A", title: "3"))
        do {
            let journal = ScrobbleJournal(folder: dir)
            #expect(try journal.open() == ScrobbleJournal.Contents())
            try journal.add(a)
            try journal.add(b)
            try journal.add(c)
            try journal.sending(["a", "b", "c"])
            try journal.unsent(["a", "b", "c"])
            try journal.sending(["a", "b"])
            try journal.done(["a"])
            try journal.setAside(c, reason: "HTTP 400")
        }
        // A write cut short by a crash leaves a torn last line, which is skipped.
        let handle = try FileHandle(forWritingTo: dir.appendingPathComponent("queue.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"add\":{\"id\":\"d\",\"lis".utf8))
        try handle.close()
        let journal = ScrobbleJournal(folder: dir)
        let contents = try journal.open()
        #expect(contents.pending == [b])
        #expect(contents.uncertain == ["b"])
        #expect(contents.skipped == 1)
        // Rewritten compacted: the same on the next read, without the torn line.
        let again = try ScrobbleJournal(folder: dir).open()
        #expect(again.pending == [b] && again.uncertain == ["b"] && again.skipped == 0)
        let rejected = try String(contentsOf: dir.appendingPathComponent("rejected.jsonl"), encoding: .utf8)
        #expect(rejected.contains("HTTP 400") && rejected.contains("\"c\""))
    }

    @Test func thePayloadIsWhatListenBrainzTakes() throws {
        let listen = ScrobbleListen(listenedAt: 1_700_000_123, artist: "Artist", title: "Song", release: "Album", duration: 183.4,
                                    trackNumber: 7, musicBrainz: Self.ids)
        let body = try #require(JSONSerialization.jsonObject(with: ListenBrainzPayload.body(.single, [listen])) as? [String: Any])
        #expect(body["listen_type"] as? String == "single")
        let item = try #require((body["payload"] as? [[String: Any]])?.first)
        #expect(item["listened_at"] as? Int == 1_700_000_123)
        let metadata = try #require(item["track_metadata"] as? [String: Any])
        #expect(metadata["artist_name"] as? String == "Artist" && metadata["track_name"] as? String == "Song")
        #expect(metadata["release_name"] as? String == "Album")
        let info = try #require(metadata["additional_info"] as? [String: Any])
        #expect(info["duration_ms"] as? Int == 183_400 && info["tracknumber"] as? Int == 7)
        #expect(info["recording_mbid"] as? String == Self.ids.recording && info["track_mbid"] as? String == Self.ids.track)
        #expect(info["release_mbid"] as? String == Self.ids.release && info["release_group_mbid"] as? String == Self.ids.releaseGroup)
        #expect(info["artist_mbids"] as? [String] == Self.ids.artists)
        #expect(info["submission_client"] as? String == "Tonearm")
        // Playing now has no time.
        let now = try #require(JSONSerialization.jsonObject(with: ListenBrainzPayload.body(.playingNow, [listen])) as? [String: Any])
        #expect(now["listen_type"] as? String == "playing_now")
        #expect((now["payload"] as? [[String: Any]])?.first?["listened_at"] == nil)
    }

    @Test func aListenNeedsAnArtistAndATitle() {
        let at = Date(timeIntervalSince1970: 1_700_000_000.7)
        #expect(ScrobbleListen(Listen(uri: "file:///a", title: "T", artists: [], album: nil, startedAt: at, heard: 100)) == nil)
        #expect(ScrobbleListen(Listen(uri: "file:///a", title: " ", artists: ["A"], album: nil, startedAt: at, heard: 100)) == nil)
        let listen = ScrobbleListen(Listen(uri: "file:///a", title: "T", artists: ["A", "B"], album: "", startedAt: at, heard: 100,
                                           length: 200, trackNumber: 2, musicBrainz: Self.ids))
        #expect(listen == ScrobbleListen(listenedAt: 1_700_000_000, artist: "A, B", title: "T", release: nil, duration: 200, trackNumber: 2,
                                         musicBrainz: Self.ids))
    }

    @Test func musicBrainzIDsFromTagFields() {
        let fields: [String: [String]] = [
            "MUSICBRAINZ_TRACKID": [Self.ids.recording!.uppercased()],
            "MUSICBRAINZ_RELEASETRACKID": [Self.ids.track!],
            "MUSICBRAINZ_ALBUMID": [Self.ids.release!],
            "MUSICBRAINZ_RELEASEGROUPID": ["not a uuid"],
            // Several artists, in one value or several.
            "MUSICBRAINZ_ARTISTID": ["\(Self.ids.artists[0]); \(Self.ids.artists[1])", Self.ids.artists[0]],
        ]
        let ids = MusicBrainzIDs(tagFields: fields)
        #expect(ids == MusicBrainzIDs(recording: Self.ids.recording, track: Self.ids.track, release: Self.ids.release, releaseGroup: nil,
                                      artists: Self.ids.artists))
        #expect(MusicBrainzIDs(tagFields: ["TITLE": ["x"]]) == nil)
        #expect(MusicBrainzIDs(stored: Self.ids.stored) == Self.ids)
    }

    @Test func settings() throws {
        let off = try ScrobbleSettings(section: [:])
        #expect(!off.enabled && off.url.absoluteString == ScrobbleSettings.defaultURL && off.batchSize == 100)
        let s = try ScrobbleSettings(section: ["enabled": .bool(true), "url": .string("http://127.0.0.1:42010/apis/listenbrainz/"),
                                               "token-env": .string("MY_TOKEN"), "timeout": .double(2)])
        #expect(s.url.absoluteString == "http://127.0.0.1:42010/apis/listenbrainz")
        #expect(try s.token(environment: ["MY_TOKEN": " abc \n"]) == "abc")
        #expect(throws: TonearmError.self) { try s.token(environment: [:]) }
        // A token in clear in the config is refused, with where to put it instead.
        #expect(throws: TonearmError.self) { try ScrobbleSettings(section: ["token": .string("abc")]) }
        #expect(throws: TonearmError.self) { try ScrobbleSettings(section: ["url": .string("ftp://x")]) }
        #expect(throws: TonearmError.self) { try ScrobbleSettings(section: ["batch-size": .int(1001)]) }
        let dir = folder()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "secret-token\nignored\n".write(to: dir.appendingPathComponent("token"), atomically: true, encoding: .utf8)
        let f = try ScrobbleSettings(section: ["token-file": .string(dir.appendingPathComponent("token").path)])
        #expect(try f.token(environment: [:]) == "secret-token")
        let missing = try ScrobbleSettings(section: ["token-file": .string(dir.appendingPathComponent("none").path)])
        #expect(throws: TonearmError.self) { try missing.token(environment: [:]) }
    }
}

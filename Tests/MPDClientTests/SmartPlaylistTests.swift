import DaemonHarness
import DBus
import Foundation
import TagFields
import TestSupport
import Testing

/// Smart playlists on the real daemon: `.smart` rules files in the playlists folder, listed beside the saved ones
/// over MPRIS, the CLI and the MPD face (mpc, python-mpd2), read live as ratings and the library change, a wrong one
/// refused with its line and reason while the others work on; and a queue that continues from one.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SmartPlaylistTests {
    static let mpris = "org.mpris.MediaPlayer2.Playlists"

    /// A library of tagged, distinct songs (the history knows a song by its content), and the playlists folder.
    static func rig(_ songs: [(title: String, genre: String)], seconds: Double) throws -> (MPDDaemon, URL) {
        let m = try MPDDaemon(titles: [], seconds: seconds, cover: false)
        for (i, song) in songs.enumerated() { try Self.song(m, song.title, song.genre, seconds: seconds, frequency: 300 + 70 * Double(i)) }
        let folder = m.d.home.file("data/tonearm/playlists")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (m, folder)
    }

    static func song(_ m: MPDDaemon, _ title: String, _ genre: String, seconds: Double, frequency: Double) throws {
        let url = m.music.appendingPathComponent("Album/\(title).wav")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try WAV.sine(frequency: frequency, seconds: seconds, sampleRate: 11025, channels: 1).write(to: url)
        try TagFields.write(url.path, [(key: "TITLE", value: title), (key: "ARTIST", value: "Band"), (key: "GENRE", value: genre)])
    }

    func uri(_ m: MPDDaemon, _ title: String) -> String { Daemon.uri(m.music.appendingPathComponent("Album/\(title).wav").path) }

    /// The CLI's stdout, stderr and exit status.
    func cli(_ d: Daemon, _ arguments: String...) async throws -> (out: String, err: String, status: Int32) {
        try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, arguments, environment: d.environment)
    }

    /// `tonearm playlist show NAME --json` as URIs.
    func show(_ m: MPDDaemon, _ name: String) async throws -> [String] {
        let r = try await m.d.tonearm("playlist", "show", name, "--json")
        #expect(r.status == 0, "\(r.out)")
        let rows = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]] ?? []
        return rows.compactMap { $0["uri"] as? String }
    }

    @Test func listedEverywhereReadLiveAndAWrongOneRefusedAlone() async throws {
        let (m, folder) = try Self.rig([("One", "Jazz"), ("Two", "Rock"), ("Three", "jazz")], seconds: 20)
        try "# Jazz, last title first\ngenre is jazz\nsort title desc\n".write(to: folder.appendingPathComponent("Jazz.smart"), atomically: true, encoding: .utf8)
        try "rating gt 3\n".write(to: folder.appendingPathComponent("Loved.smart"), atomically: true, encoding: .utf8)
        try "genre is Jazz\nlimit lots\n".write(to: folder.appendingPathComponent("Broken.smart"), atomically: true, encoding: .utf8)
        try "#EXTM3U\n\(uri(m, "Two"))\n".write(to: folder.appendingPathComponent("Mix.m3u8"), atomically: true, encoding: .utf8)
        try await m.start(songs: 3)
        let d = m.d

        // Listed with the saved one everywhere: MPRIS, the CLI (marked smart), mpc.
        let reply = try await d.call(Self.mpris, "GetPlaylists", [.uint32(0), .uint32(10), .string("Alphabetical"), .bool(false)])
        let listed = (reply.first?.arrayValue ?? []).compactMap { item -> (String, String)? in
            guard case .structure(let f) = item.unwrapped, let id = f[0].stringValue, let name = f[1].stringValue else { return nil }
            return (name, id)
        }
        #expect(listed.map(\.0) == ["Broken", "Jazz", "Loved", "Mix"])
        #expect(try await d.get(Self.mpris, "PlaylistCount").int64Value == 4)
        let list = try await d.tonearm("playlist", "list", "--json")
        let rows = try JSONSerialization.jsonObject(with: Data(list.out.utf8)) as? [[String: Any]] ?? []
        #expect(Set(rows.filter { $0["smart"] as? Bool == true }.compactMap { $0["name"] as? String }) == ["Broken", "Jazz", "Loved"], "\(list.out)")
        #expect(try await d.tonearm("playlist", "list").out.contains("smart"))
        let ls = try await m.mpc("lsplaylists")
        #expect(ls.out.split(separator: "\n").map(String.init).sorted() == ["Broken", "Jazz", "Loved", "Mix"], "\(ls)")

        // Its tracks, in its order, for the CLI and mpc.
        #expect(try await show(m, "Jazz") == [uri(m, "Three"), uri(m, "One")])
        #expect(try await m.mpc("-f", "%file%", "playlist", "Jazz").out == "Album/Three.wav\nAlbum/One.wav")

        // The wrong one: its line and reason, in the CLI, over MPRIS and mpc, and once in the log.
        let broken = try await cli(d, "playlist", "show", "Broken")
        #expect(broken.status != 0 && broken.err.contains("Broken.smart line 2: 'limit' takes"), "\(broken)")
        await #expect {
            _ = try await d.call(Self.mpris, "ActivatePlaylist", [.objectPath(listed.first { $0.0 == "Broken" }!.1)])
        } throws: { error in
            guard let e = error as? DBusError else { return false }
            return e.name == "org.tonearm.Error.InvalidPlaylist" && e.message.contains("line 2")
        }
        let mpcBroken = try await m.mpc("playlist", "Broken")
        #expect(mpcBroken.status != 0 && mpcBroken.err.contains("line 2"), "\(mpcBroken)")
        #expect(d.log.contains("smart playlist Broken.smart: line 2: 'limit' takes"))

        // Live: a rating from an MPD client puts a song in Loved; a song added to the library joins Jazz.
        #expect(try await show(m, "Loved") == [])
        #expect(try await m.mpc("sticker", "Album/Two.wav", "set", "rating", "8").status == 0)
        #expect(try await show(m, "Loved") == [uri(m, "Two")])
        // An MPD client idling on stored playlists hears of a rating set by another since its last look (a smart playlist
        // may have changed).
        let woke = try await m.python("""
        other = mpd.MPDClient(); other.timeout = 30; other.connect('127.0.0.1', PORT)
        other.sticker_set('song', 'Album/One.wav', 'rating', '2')
        print(client.idle('stored_playlist'))
        """)
        #expect(woke.contains("stored_playlist"), "\(woke)")
        try Self.song(m, "Five", "Jazz", seconds: 20, frequency: 900)
        try await d.waitFor("the new song in the library", timeout: .seconds(60)) {
            let stats = (try? await m.mpc("stats").out) ?? ""
            return stats.components(separatedBy: "\n").contains { $0.hasPrefix("Songs:") && $0.dropFirst(6).trimmingCharacters(in: .whitespaces) == "4" }
        }
        #expect(try await show(m, "Jazz") == [uri(m, "Three"), uri(m, "One"), uri(m, "Five")])

        // Activated over MPRIS: the queue is what the rules select now, and it plays.
        _ = try await d.call(Self.mpris, "ActivatePlaylist", [.objectPath(listed.first { $0.0 == "Jazz" }!.1)])
        try await d.waitFor("the Jazz queue playing") {
            let playing = try await d.status() == "Playing"
            let urls = try await m.mpc("-f", "%file%", "playlist").out
            return playing && urls == "Album/Three.wav\nAlbum/One.wav\nAlbum/Five.wav"
        }
        // A smart playlist changes only through its rules: mpc and python-mpd2 are refused, and the file stays.
        let save = try await m.mpc("save", "Jazz")
        #expect(save.status != 0, "\(save)")
        let out = try await m.python("""
        try:
            client.playlistadd('Jazz', 'Album/Two.wav')
        except mpd.CommandError as e:
            print('ack', e)
        client.load('Loved')
        print(len(client.playlistinfo()))
        """)
        #expect(out.contains("ack") && out.contains("smart playlist"), "\(out)")
        #expect(out.hasSuffix("4"), "Loved loaded after the three: \(out)")
        #expect(try String(contentsOf: folder.appendingPathComponent("Jazz.smart"), encoding: .utf8).contains("sort title desc"))
        // Saving the queue over a smart playlist's name from D-Bus is refused too.
        let overwrite = try await cli(d, "playlist", "save", "Jazz")
        #expect(overwrite.status != 0 && overwrite.err.contains("smart playlist"), "\(overwrite)")
    }

    @Test func aQueueContinuesFromASmartPlaylist() async throws {
        let (m, folder) = try Self.rig([("One", "Jazz"), ("Two", "Rock"), ("Three", "Jazz"), ("Four", "Jazz")], seconds: 1.5)
        try "genre is jazz\nsort title\n".write(to: folder.appendingPathComponent("Jazz.smart"), atomically: true, encoding: .utf8)
        try "genre is\n".write(to: folder.appendingPathComponent("Broken.smart"), atomically: true, encoding: .utf8)
        try await m.start(songs: 4)
        let d = m.d

        // Set from python-mpd2 (mpd's `continue`, a Tonearm option like consume), shown by status and MPRIS.
        let out = try await m.python("""
        mpd.MPDClient.add_command('continue', mpd.MPDClient._parse_nothing)
        try:
            getattr(client, 'continue')('playlist:Broken')
        except mpd.CommandError as e:
            print('ack', e)
        try:
            getattr(client, 'continue')('playlist:Nothing')
        except mpd.CommandError as e:
            print('ack', e)
        getattr(client, 'continue')('Jazz')
        print(client.status()['continue'])
        """)
        #expect(out.contains("Broken.smart line 1"), "\(out)")
        #expect(out.contains("no playlist named Nothing"), "\(out)")
        #expect(out.hasSuffix("playlist:Jazz"), "\(out)")
        #expect(try await d.get(Daemon.tonearm, "Continue").stringValue == "playlist:Jazz")
        #expect(try await d.tonearm("continue").out == "playlist:Jazz")

        // One rock song queued: as each last track starts, the playlist's next song not queued follows it.
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await m.mpc("add", "Album/Two.wav")
        _ = try await m.mpc("play")
        try await d.waitFor("the playlist played through after the song", timeout: .seconds(90)) {
            try await m.mpc("-f", "%file%", "playlist").out == "Album/Two.wav\nAlbum/Four.wav\nAlbum/One.wav\nAlbum/Three.wav"
        }
        try await d.waitForTheEnd("the last one played", after: changes, timeout: .seconds(90))
        #expect(try await d.tracks().count == 4, "nothing is left that is not queued")
        #expect(d.log.contains("continue: playlist:Jazz has nothing left that is not queued"))
        // The CLI turns it off; mpd clients see the option change.
        #expect(try await d.tonearm("continue", "off").out == "off")
        #expect(try await m.python("print(client.status()['continue'])").hasSuffix("off"))
        #expect(try await m.mpc("status").status == 0)
    }
}

import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// mpd's sticker commands over the listening history, with mpc and python-mpd2: a rating set from an MPD client
/// shows in MPRIS, and play counts come back as read-only stickers.
@Suite(.serialized) struct StickerTests {
    @Test func ratingsAndPlayCountsAsStickers() async throws {
        let m = try MPDDaemon(titles: ["One", "Two"], seconds: 1)
        // The history knows a song by its content: the two must differ.
        try WAV.sine(frequency: 660, seconds: 1, sampleRate: 11025, channels: 1)
            .write(to: m.music.appendingPathComponent("Album/Two.wav"))
        try await m.start(songs: 2)
        // mpc: set, get, list; a read-only sticker is refused.
        #expect(try await m.mpc("sticker", "Album/One.wav", "set", "rating", "8").status == 0)
        let got = try await m.mpc("sticker", "Album/One.wav", "get", "rating")
        #expect(got.out == "rating=8", "\(got)")
        let refused = try await m.mpc("sticker", "Album/One.wav", "set", "playcount", "99")
        #expect(refused.status != 0 && refused.err.contains("read-only"), "\(refused)")
        #expect(try await m.mpc("sticker", "Album/Nothing.wav", "get", "rating").status != 0)

        // Played through, both count; python-mpd2 reads them back and finds the rated one.
        _ = try await m.mpc("add", "Album/One.wav")
        _ = try await m.mpc("add", "Album/Two.wav")
        let changes = try await SignalRecorder(m.d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await m.mpc("play")
        try await m.d.waitForTheEnd("both played", after: changes)
        try await m.d.waitFor("both counted") {
            let out = (try? await m.mpc("sticker", "Album/Two.wav", "list").out) ?? ""
            return out.contains("playcount=1")
        }
        let out = try await m.python("""
        print(sorted(client.sticker_list('song', 'Album/One.wav').items()))
        print(client.sticker_find('song', '', 'rating'))
        print(client.sticker_find('song', 'Album', 'rating', '>', '5'))
        client.sticker_delete('song', 'Album/One.wav', 'rating')
        try:
            client.sticker_get('song', 'Album/One.wav', 'rating')
        except mpd.CommandError as e:
            print('ack', e)
        print(client.stickernames() if hasattr(client, 'stickernames') else 'n/a')
        """)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines[0].contains("('playcount', '1')") && lines[0].contains("('rating', '8')") && lines[0].contains("lastplayed"), "\(out)")
        #expect(lines[1].contains("'file': 'Album/One.wav'") && lines[1].contains("8") && !lines[1].contains("Two"), "\(out)")
        #expect(lines[2].contains("Album/One.wav"), "\(out)")
        #expect(lines[3].contains("no such sticker"), "\(out)")
        // The same figures over MPRIS, for the track that is current at the end.
        try await m.d.waitFor("xesam:useCount") { try await m.d.metadata()["xesam:useCount"]?.int64Value == 1 }
    }
}

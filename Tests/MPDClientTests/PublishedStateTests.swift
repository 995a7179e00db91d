import DaemonHarness
import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// Every face reads one published state: a change made through one face is there, at once, in the next read through
/// any other, and no read waits for the Player while it is busy.
@Suite(.serialized) struct PublishedStateTests {
    /// Read-your-writes across faces: each read below is made right after the change's reply, with no waiting.
    @Test func aChangeMadeOverOneFaceIsReadAtOnceOverEveryOther() async throws {
        let m = try await Self.playingAlbum()

        // MPRIS → MPD and the CLI.
        _ = try await m.d.call(Daemon.player, "Pause")
        #expect(try await m.mpc("status").out.contains("[paused]"))
        let cli = try Self.object(try await m.d.tonearm("status", "--json").out)
        #expect((cli["status"] as? String)?.lowercased() == "paused", "\(cli)")

        // MPD → MPRIS and the CLI.
        try await m.mpc("volume", "30")
        #expect(try await m.d.get(Daemon.player, "Volume").doubleValue == 0.3)
        #expect(try Self.object(try await m.d.tonearm("status", "--json").out)["volume"] as? Double == 0.3)
        try await m.mpc("play")
        #expect(try await m.d.status() == "Playing")
        try await m.mpc("del", "3")
        #expect(try await m.d.tracks().count == 2)

        // The CLI → MPRIS and MPD.
        #expect(try await m.d.tonearm("volume", "55").status == 0)
        #expect(try await m.d.get(Daemon.player, "Volume").doubleValue == 0.55)
        let out = try await m.python("print(client.status()['volume'], client.status()['state'], client.status()['playlistlength'])")
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "55 play 2")

        // MPRIS seeks; MPD's elapsed is the new position, and MPRIS's own Position agrees.
        let id = try await m.d.trackID()
        _ = try await m.d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(20_000_000)])
        let status = try await m.python("s = client.status(); print(s['elapsed'], s['songid'])")
        let elapsed = Double(status.split(separator: " ").first ?? "") ?? -1
        #expect(elapsed >= 20 && elapsed < 29, "MPD read \(status) right after SetPosition(20 s)")
        #expect(try await m.d.position() >= 20_000_000)

        // MPRIS queue edits → MPD's playlist, with a new version.
        let before = try await m.python("print(client.status()['playlist'])")
        _ = try await m.d.call(Daemon.tonearm, "Enqueue", [.stringArray([m.music.appendingPathComponent("Album/Three.wav").path])])
        let after = try await m.python("s = client.status(); print(s['playlist'], s['playlistlength'])")
        let parts = after.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(parts.last == "3")
        #expect(parts.first != before.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A long queue edit keeps the Player busy; reads over another connection and the MPD face are answered
    /// meanwhile. Before faces read the published state, every MPRIS read waited behind the edit.
    @Test func readsAreAnsweredWhileThePlayerIsBusy() async throws {
        let m = try await Self.playingAlbum()
        let reader = try DBusConnection.connect(address: m.d.bus.address)
        defer { reader.close() }

        let file = m.music.appendingPathComponent("Album/One.wav").path
        let uris = Array(repeating: file, count: 5_000)
        let edit = Task {
            try await m.d.client.call(destination: Daemon.busName, path: Daemon.path, interface: Daemon.tonearm,
                                      member: "Enqueue", arguments: [.stringArray(uris)], timeout: .seconds(600))
        }
        var readsWhileBusy = 0
        var mpdWhileBusy = 0
        // Reads until the edit is answered: each read must come back (and say Playing) while it is not.
        let done = Flag()
        let watcher = Task {
            _ = try? await edit.value
            done.set()
        }
        while !done.isSet {
            let status = try await reader.getProperty(destination: Daemon.busName, path: Daemon.path,
                                                      interface: Daemon.player, name: "PlaybackStatus")
            #expect(status.stringValue == "Playing")
            if !done.isSet { readsWhileBusy += 1 }
            let mpd = try await m.mpc("status")
            #expect(mpd.out.contains("[playing]"))
            if !done.isSet { mpdWhileBusy += 1 }
        }
        _ = await watcher.value
        let added = try await edit.value
        #expect(added.first?.arrayValue?.count == 5_000)
        #expect(readsWhileBusy > 0, "no MPRIS read was answered while the 5,000-entry edit was under way")
        #expect(mpdWhileBusy > 0, "no MPD status was answered while the 5,000-entry edit was under way")
        #expect(try await m.d.tracks().count == 5_003)

        // A seek storm over MPD while MPRIS and MPD read: every read answered, and the player still plays.
        let out = try await m.python("""
        import threading
        storm = mpd.MPDClient(); storm.timeout = 60; storm.connect('127.0.0.1', PORT)
        def seeks():
            for i in range(300):
                storm.seekcur('+1' if i % 2 == 0 else '-1')
        t = threading.Thread(target=seeks); t.start()
        answered = 0
        while t.is_alive():
            s = client.status(); answered += 1
            assert s['state'] == 'play', s
        t.join()
        print('answered', answered > 0)
        """)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "answered True")
        #expect(try await m.d.status() == "Playing")
    }

    /// The daemon with its MPD face, playing the album of three songs.
    static func playingAlbum() async throws -> MPDDaemon {
        let m = try MPDDaemon()
        try await m.start()
        try await m.mpc("add", "Album")
        try await m.mpc("play")
        try await m.d.waitFor("Playing") { try await m.d.status() == "Playing" }
        return m
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

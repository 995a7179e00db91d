import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// Saved playlists through `tonearm playlist` and org.mpris.MediaPlayer2.Playlists, on the real daemon.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PlaylistsTests {
    static let mpris = "org.mpris.MediaPlayer2.Playlists"

    static func playlists(_ d: Daemon, _ index: UInt32, _ max: UInt32, _ order: String, _ reverse: Bool) async throws -> [String] {
        let reply = try await d.call(mpris, "GetPlaylists", [.uint32(index), .uint32(max), .string(order), .bool(reverse)])
        return (reply.first?.arrayValue ?? []).compactMap { item -> String? in
            guard case .structure(let f) = item.unwrapped else { return nil }
            return f[1].stringValue
        }
    }

    @Test func saveListShowLoadAndRemoveThroughTheCommandLineAndMPRIS() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 1), b = try d.sine("beta.wav", seconds: 1)
        // A playlist in the music folder is listed too (and never removed).
        let music = d.home.file("Music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        try "#EXTM3U\n\(b)\n".write(to: music.appendingPathComponent("found.m3u"), atomically: true, encoding: .utf8)
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([a, b])

        #expect(try await d.get(Self.mpris, "Orderings").arrayValue?.compactMap(\.stringValue) == ["Alphabetical", "Created", "Modified", "Played", "User"])
        #expect(try await d.get(Self.mpris, "PlaylistCount").int64Value == 1)
        let inactive = try await d.get(Self.mpris, "ActivePlaylist")
        #expect(inactive == .structure([.bool(false), .structure([.objectPath("/"), .string(""), .string("")])]), "\(inactive)")

        #expect(try await d.tonearm("playlist", "save", "Zebra").status == 0)
        _ = try await d.call(Daemon.trackList, "RemoveTrack", [.objectPath(try await d.tracks()[1])])
        #expect(try await d.tonearm("playlist", "save", "apple").status == 0)
        #expect(try await d.get(Self.mpris, "PlaylistCount").int64Value == 3)
        try await d.waitFor("PlaylistCount announced") {
            changes.signals.contains { $0.arguments[0].stringValue == Self.mpris && $0.arguments[1].vardictValue?["PlaylistCount"]?.int64Value == 3 }
        }
        let saved = try String(contentsOf: d.home.file("data/tonearm/playlists/Zebra.m3u8"), encoding: .utf8)
        #expect(saved.hasPrefix("#EXTM3U\n") && saved.contains(Daemon.uri(a)) && saved.contains(Daemon.uri(b)), "\(saved)")

        // Every ordering, reversed, and a window of it.
        #expect(try await Self.playlists(d, 0, 10, "Alphabetical", false) == ["apple", "found", "Zebra"])
        #expect(try await Self.playlists(d, 0, 10, "Alphabetical", true) == ["Zebra", "found", "apple"])
        #expect(try await Self.playlists(d, 1, 1, "Alphabetical", false) == ["found"])
        #expect(try await Self.playlists(d, 5, 10, "Alphabetical", false) == [])
        #expect(try await Self.playlists(d, 0, 10, "User", false) == ["Zebra", "apple", "found"])
        #expect(try await Self.playlists(d, 0, 10, "User", true) == ["found", "apple", "Zebra"])
        // Modified and Created come from the files: modification times set in an order unlike the one they were made in.
        let files = ["apple": d.home.file("data/tonearm/playlists/apple.m3u8"), "Zebra": d.home.file("data/tonearm/playlists/Zebra.m3u8"),
                     "found": music.appendingPathComponent("found.m3u")]
        for (name, year) in [("apple", 2020.0), ("Zebra", 2021.0), ("found", 2022.0)] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: (year - 1970) * 31_557_600)],
                                                  ofItemAtPath: files[name]!.path)
        }
        #expect(try await Self.playlists(d, 0, 10, "Modified", false) == ["apple", "Zebra", "found"])
        #expect(try await Self.playlists(d, 0, 10, "Modified", true) == ["found", "Zebra", "apple"])
        // Created: the birth time where the file system keeps one (then found, Zebra, apple, the order they were made
        // in), the modification time where it does not.
        var born: [String: Date] = [:]
        for (name, file) in files {
            let values = try file.resourceValues(forKeys: [.creationDateKey, .contentModificationDateKey])
            born[name] = values.creationDate ?? values.contentModificationDate
        }
        let byBirth = ["apple", "Zebra", "found"].sorted { (born[$0]!, $0.lowercased()) < (born[$1]!, $1.lowercased()) }
        #expect(try await Self.playlists(d, 0, 10, "Created", false) == byBirth)
        #expect(try await Self.playlists(d, 0, 10, "Created", true) == byBirth.reversed())
        await #expect(throws: DBusError.self) { _ = try await Self.playlists(d, 0, 10, "Sideways", false) }

        let shown = try await d.tonearm("playlist", "show", "Zebra", "--json")
        #expect(shown.status == 0 && shown.out.contains("alpha.wav") && shown.out.contains("beta.wav"), "\(shown.out)")
        let listed = try await d.tonearm("playlist", "list", "--json")
        #expect(listed.out.contains("\"found\"") && listed.out.contains("\"saved\":false"), "\(listed.out)")

        // ActivatePlaylist replaces the queue, plays, and the playlist is active until the queue changes hands.
        let reply = try await d.call(Self.mpris, "GetPlaylists", [.uint32(0), .uint32(10), .string("Alphabetical"), .bool(true)])
        guard case .structure(let zebra)? = reply.first?.arrayValue?.first?.unwrapped else { Issue.record("no playlists"); return }
        changes.clear()
        _ = try await d.call(Self.mpris, "ActivatePlaylist", [zebra[0]])
        // Seen in the signal, not by polling: the two one-second songs can end before a poll on a loaded machine.
        try await d.waitFor("the playlist playing") {
            changes.signals.contains { $0.arguments[1].vardictValue?["PlaybackStatus"]?.stringValue == "Playing" }
        }
        #expect(try await d.tracks().count == 2)
        #expect(try await d.get(Self.mpris, "ActivePlaylist") == .structure([.bool(true), .structure(zebra)]))
        try await d.waitFor("ActivePlaylist announced") {
            changes.signals.contains { $0.arguments[0].stringValue == Self.mpris && $0.arguments[1].vardictValue?["ActivePlaylist"] != nil }
        }
        #expect(try await Self.playlists(d, 0, 1, "Played", true) == ["Zebra"], "the last played comes last, first when reversed")
        #expect(try await Self.playlists(d, 0, 10, "Played", false) == ["apple", "found", "Zebra"], "never played first, by name")
        // An id that names no playlist is refused, and nothing changes.
        await #expect(throws: DBusError.self) {
            _ = try await d.call(Self.mpris, "ActivatePlaylist", [.objectPath("/org/tonearm/Playlist/none")])
        }
        #expect(try await d.tracks().count == 2)

        #expect(try await d.tonearm("playlist", "load", "apple", "--enqueue").status == 0)
        #expect(try await d.tracks().count == 3)
        #expect(try await d.tonearm("playlist", "load", "found").status == 0)
        #expect(try await d.tracks().count == 1)
        #expect(try await d.status() != "Playing", "load alone does not play")
        changes.clear()
        #expect(try await d.tonearm("playlist", "load", "found", "--play").status == 0)
        // The song is a second long: the signal, not a poll that may come after it ended.
        try await d.waitFor("playing after load --play") {
            changes.signals.contains { $0.arguments[1].vardictValue?["PlaybackStatus"]?.stringValue == "Playing" }
        }
        #expect(try await d.tracks().count == 1)
        let afterLoad = try await d.get(Self.mpris, "ActivePlaylist")
        guard case .structure(let maybe) = afterLoad.unwrapped, case .structure(let found) = maybe[1].unwrapped else {
            Issue.record("ActivePlaylist is \(afterLoad)"); return
        }
        #expect(maybe[0] == .bool(true) && found[1] == .string("found"))
        // Saving over a saved playlist changes it in place: PlaylistChanged names it (the same id), the count stays.
        let rewritten = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.mpris, member: "PlaylistChanged"))
        #expect(try await d.tonearm("playlist", "save", "Zebra").status == 0)
        try await d.waitFor("PlaylistChanged for Zebra") {
            rewritten.signals.contains { signal in
                guard case .structure(let f)? = signal.arguments.first?.unwrapped else { return false }
                return f[0] == zebra[0] && f[1] == .string("Zebra")
            }
        }
        #expect(try await d.get(Self.mpris, "PlaylistCount").int64Value == 3)
        let resaved = try String(contentsOf: d.home.file("data/tonearm/playlists/Zebra.m3u8"), encoding: .utf8)
        #expect(resaved.contains(Daemon.uri(b)) && !resaved.contains(Daemon.uri(a)), "\(resaved)")
        // Another queue: no playlist is active any more.
        _ = try await d.call(Daemon.tonearm, "Clear")
        try await d.waitFor("no active playlist") {
            try await d.get(Self.mpris, "ActivePlaylist") == .structure([.bool(false), .structure([.objectPath("/"), .string(""), .string("")])])
        }

        // Removing: saved ones only; bad names are refused with a clear error.
        #expect(try await d.tonearm("playlist", "rm", "apple").status == 0)
        #expect(!FileManager.default.fileExists(atPath: d.home.file("data/tonearm/playlists/apple.m3u8").path))
        #expect(try await d.get(Self.mpris, "PlaylistCount").int64Value == 2)
        let refused = try await d.tonearm("playlist", "rm", "found")
        #expect(refused.status == 1)
        #expect(FileManager.default.fileExists(atPath: music.appendingPathComponent("found.m3u").path), "a file in the music folder is never removed")
        #expect(try await d.tonearm("playlist", "save", "../escape").status == 1)
        #expect(try await d.tonearm("playlist", "show", "nothing-like-it").status == 1)
        _ = await d.terminate()
    }
}

import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// org.mpris.MediaPlayer2.TrackList and org.tonearm.Player1's queue editing.
@Suite(.serialized, .timeLimit(.minutes(3))) struct TrackListTests {
    @Test func addRemoveGoToAndSignals() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 30)
        let b = try d.sine("b.wav", seconds: 30)
        let c = try d.sine("c.wav", seconds: 30)
        try await d.start()
        let signals = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.trackList))
        let properties = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))

        _ = try await d.call(Daemon.trackList, "AddTrack", [.string(Daemon.uri(a)), .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .bool(false)])
        var ids = try await d.tracks()
        #expect(ids.count == 1)
        #expect(try await d.status() == "Stopped", "AddTrack without SetAsCurrent does not start playback")
        _ = try await d.call(Daemon.trackList, "AddTrack", [.string(Daemon.uri(b)), .objectPath(ids[0]), .bool(true)])
        try await d.waitFor("b playing") { try await d.status() == "Playing" }
        ids = try await d.tracks()
        #expect(ids.count == 2)
        #expect(try await d.trackID() == ids[1])

        let meta = try await d.call(Daemon.trackList, "GetTracksMetadata", [.objectPathArray(ids + ["/org/tonearm/track/999"])])
        let maps = (meta.first?.arrayValue ?? []).compactMap(\.vardictValue)
        #expect(maps.count == 2)
        #expect(maps.map { $0["mpris:trackid"]?.stringValue } == ids)
        #expect(maps[0]["xesam:title"]?.stringValue == "a")

        _ = try await d.call(Daemon.trackList, "GoTo", [.objectPath(ids[0])])
        try await d.waitFor("GoTo") { try await d.trackID() == ids[0] }
        _ = try await d.call(Daemon.trackList, "RemoveTrack", [.objectPath(ids[1])])
        #expect(try await d.tracks() == [ids[0]])
        do {
            _ = try await d.call(Daemon.trackList, "RemoveTrack", [.objectPath(ids[1])])
            Issue.record("removing an unknown track must fail")
        } catch let e as DBusError {
            #expect(e.name == "org.tonearm.Error.NoSuchTrack")
        }

        try await d.waitFor("signals") {
            signals.named("TrackAdded").count == 2 && signals.named("TrackRemoved").count == 1
        }
        let added = signals.named("TrackAdded")
        #expect(added[1].arguments[1] == .objectPath(ids[0]), "TrackAdded names the track it follows")
        #expect(signals.named("TrackRemoved")[0].arguments == [.objectPath(ids[1])])
        try await d.waitFor("Tracks invalidated") {
            properties.signals.contains { $0.arguments[0] == .string(Daemon.trackList) && ($0.arguments[2].arrayValue ?? []).contains(.string("Tracks")) }
        }
        #expect(try await d.get(Daemon.trackList, "CanEditTracks") == .bool(true))

        // org.tonearm.Player1: enqueue many, move, clear.
        let more = try await d.call(Daemon.tonearm, "Enqueue", [.stringArray([Daemon.uri(b), c])])
        let newIDs = (more.first?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(newIDs.count == 2)
        #expect(try await d.tracks() == [ids[0]] + newIDs)
        _ = try await d.call(Daemon.tonearm, "MoveTrack", [.objectPath(newIDs[1]), .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack")])
        #expect(try await d.tracks() == [newIDs[1], ids[0], newIDs[0]])
        try await d.waitFor("TrackListReplaced on move") { signals.named("TrackListReplaced").count >= 1 }
        _ = try await d.call(Daemon.tonearm, "Clear")
        #expect(try await d.tracks().isEmpty)
        #expect(try await d.status() == "Stopped")
        #expect(try await d.trackID() == "/org/mpris/MediaPlayer2/TrackList/NoTrack")
    }
}

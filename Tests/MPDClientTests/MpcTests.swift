import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// mpc, the reference command-line client, against the real daemon: one state behind two faces.
@Suite(.serialized) struct MpcTests {
    @Test func statusAddPlayPauseSeekVolumePlaylistSearch() async throws {
        let m = try MPDDaemon()
        try await m.start()
        #expect(try await m.mpc("listall").out.components(separatedBy: "\n") == ["Album/One.wav", "Album/Three.wav", "Album/Two.wav"])
        try await m.mpc("add", "Album")
        #expect(try await m.mpc("playlist").out.components(separatedBy: "\n") == ["One", "Three", "Two"])
        #expect(try await m.d.tracks().count == 3, "the MPRIS TrackList holds what mpc added")

        try await m.mpc("play", "2")
        try await m.d.waitFor("Playing") { try await m.d.status() == "Playing" }
        let status = try await m.status()
        #expect(status.contains("[playing] #2/3"), "\(status)")
        #expect(status.contains("Three"))

        try await m.mpc("pause")
        try await m.d.waitFor("Paused") { try await m.d.status() == "Paused" }
        #expect(try await m.status().contains("[paused]"))

        try await m.mpc("seek", "0:12")
        try await m.d.waitFor("position 12 s over MPRIS") { try await m.d.position() >= 12_000_000 }
        try await m.mpc("play")
        try await m.d.waitFor("Playing again") { try await m.d.status() == "Playing" }

        try await m.mpc("volume", "40")
        try await m.d.waitFor("Volume 0.4 over MPRIS") { try await m.d.get(Daemon.player, "Volume").doubleValue == 0.4 }
        #expect(try await m.status().contains("volume: 40%"))
        try await m.mpc("repeat", "on")
        try await m.mpc("random", "on")
        #expect(try await m.d.get(Daemon.player, "LoopStatus").stringValue == "Playlist")
        #expect(try await m.d.get(Daemon.player, "Shuffle").boolValue == true)
        try await m.mpc("single", "on")
        #expect(try await m.d.get(Daemon.player, "LoopStatus").stringValue == "Track")
        #expect(try await m.status().contains("repeat: on    random: on    single: on"))

        #expect(try await m.mpc("search", "title", "tw").out == "Album/Two.wav")
        #expect(try await m.mpc("find", "title", "Two").out == "Album/Two.wav")
        #expect(try await m.mpc("find", "title", "tw").out == "")
        #expect(try await m.mpc("search", "(title contains 'hre')").out == "Album/Three.wav")

        try await m.mpc("del", "1")
        #expect(try await m.mpc("playlist").out.components(separatedBy: "\n") == ["Three", "Two"])
        #expect(try await m.d.tracks().count == 2)
        try await m.mpc("crop")
        #expect(try await m.mpc("playlist").out == "Three")
        try await m.mpc("clear")
        #expect(try await m.d.tracks().isEmpty)
        #expect(try await m.status().contains("volume: 40%"))
    }

    @Test func errorsComeBackAsMPDErrors() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let missing = try await m.mpc("add", "No/Such.wav")
        #expect(missing.status != 0)
        #expect(missing.err.contains("No such directory") || missing.err.contains("No such"), "\(missing.err)")
        let crossfade = try await m.mpc("crossfade", "99")
        #expect(crossfade.status != 0)
        #expect(crossfade.err.contains("0 (off) to 15"), "\(crossfade.err)")
        #expect(try await m.mpc("lsplaylists").out == "")
        #expect(try await m.mpc("outputs").out.contains("Output 1 (default) is enabled"))
    }

    /// mpc's crossfade and mixrampdb set Tonearm's crossfade: status shows them, idle wakes `options`.
    @Test func crossfadeIsSetAndShown() async throws {
        let m = try MPDDaemon()
        try await m.start()
        #expect(try await m.mpc("crossfade").out.contains("crossfade: 0"))
        #expect(try await m.mpc("crossfade", "4").status == 0)
        #expect(try await m.mpc("crossfade").out.contains("crossfade: 4"))
        #expect(try await m.mpc("mixrampdb", "-40").status == 0)
        #expect(try await m.mpc("mixrampdb").out.contains("-40"))
        #expect(try await m.mpc("mixrampdelay", "nan").status == 0)
        #expect(try await m.mpc("crossfade", "0").status == 0)
        #expect(try await m.mpc("crossfade").out.contains("crossfade: 0"))
    }

    /// Tonearm's named outputs are MPD's outputs, one enabled at a time: enabling another switches to it.
    @Test func enablingAnOutputSwitchesToIt() async throws {
        let m = try MPDDaemon(extraConfig: "\n[outputs.file]\nkind = \"pipeline\"\nsink = \"fakesink sync=true\"\n")
        try await m.start()
        let before = try await m.mpc("outputs").out
        #expect(before.contains("Output 1 (default) is enabled") && before.contains("Output 2 (file) is disabled"), "\(before)")
        #expect(try await m.mpc("enable", "2").status == 0)
        #expect(try await m.d.get(Daemon.tonearm, "Output").stringValue == "file")
        let after = try await m.mpc("outputs").out
        #expect(after.contains("Output 1 (default) is disabled") && after.contains("Output 2 (file) is enabled"), "\(after)")
        let off = try await m.mpc("disable", "2")
        #expect(off.status != 0 && off.err.contains("one output at a time"), "\(off.err)")
        #expect(try await m.mpc("enable", "7").status != 0)
    }

    /// A change made over MPRIS wakes `mpc idle`. The change is made again until mpc has heard one, so it does not
    /// matter when mpc's idle reached the daemon.
    @Test func mprisChangeWakesMpcIdle() async throws {
        let m = try MPDDaemon()
        try await m.start()
        try await m.mpc("add", "Album/One.wav")
        let idle = try ChildProcess("/usr/bin/mpc", ["idle", "player"], environment: m.environment)
        let woke = try await eventually(timeout: .seconds(20), interval: .milliseconds(300)) {
            _ = try await m.d.call(Daemon.player, "PlayPause")
            return !idle.isRunning
        }
        #expect(woke, "mpc idle did not return; daemon log:\n\(m.d.log.suffix(2000))")
        #expect(await idle.readAll().contains("player"))

        let mixer = try ChildProcess("/usr/bin/mpc", ["idle", "mixer"], environment: m.environment)
        var volume = 0.5
        let wokeMixer = try await eventually(timeout: .seconds(20), interval: .milliseconds(300)) {
            volume = volume == 0.5 ? 0.6 : 0.5
            try await m.d.set(Daemon.player, "Volume", .double(volume))
            return !mixer.isRunning
        }
        #expect(wokeMixer)
        #expect(await mixer.readAll().contains("mixer"))

        let playlist = try ChildProcess("/usr/bin/mpc", ["idle", "playlist"], environment: m.environment)
        let two = URL(fileURLWithPath: m.music.appendingPathComponent("Album/Two.wav").path).absoluteString
        let wokePlaylist = try await eventually(timeout: .seconds(20), interval: .milliseconds(300)) {
            _ = try await m.d.call(Daemon.trackList, "AddTrack", [.string(two), .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .bool(false)])
            return !playlist.isRunning
        }
        #expect(wokePlaylist)
        #expect(await playlist.readAll().contains("playlist"))
    }

    /// Commands over MPD give the MPRIS signals, and the song ids agree with the TrackList's track ids.
    @Test func mpdChangesGiveMPRISSignalsAndIdsAgree() async throws {
        let m = try MPDDaemon()
        try await m.start()
        let signals = try await SignalRecorder(m.d.client, DBusMatchRule(path: Daemon.path))
        try await m.mpc("add", "Album")
        try await m.d.waitFor("TrackAdded ×3") { signals.named("TrackAdded").count == 3 }
        try await m.mpc("play")
        try await m.d.waitFor("PropertiesChanged Playing") {
            signals.named("PropertiesChanged").contains { $0.arguments.description.contains("Playing") }
        }
        try await m.mpc("seek", "10")
        try await m.d.waitFor("Seeked") { !signals.named("Seeked").isEmpty }
        #expect((signals.named("Seeked").last?.arguments.first?.int64Value ?? 0) >= 10_000_000)
        try await m.mpc("move", "1", "3")
        try await m.d.waitFor("TrackListReplaced") { !signals.named("TrackListReplaced").isEmpty }
        try await m.mpc("del", "2")
        try await m.d.waitFor("TrackRemoved") { !signals.named("TrackRemoved").isEmpty }

        let tracks = try await m.d.tracks()
        let ids = try await m.python("print(' '.join(s['id'] for s in client.playlistid()))")
        #expect(ids.split(separator: " ").map(String.init) == tracks.map { String($0.split(separator: "/").last!) })
        let current = try await m.python("print(client.currentsong()['id'])")
        #expect(try await m.d.trackID().hasSuffix("/\(current)"))
    }
}

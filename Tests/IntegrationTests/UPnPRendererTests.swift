import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// Casting to Tonearm: a real control point (async-upnp-client) finds the renderer by SSDP, casts files a real DLNA
/// server (minidlna) serves, and follows its events; MPRIS and the MPD face see the same player.
@Suite(.serialized) struct UPnPRendererTests {
    /// A tagged 30 s Ogg and an untagged 5 s FLAC, made with sox (minidlna reads their lengths and tags).
    static func music(_ folder: URL) async throws -> Int {
        for (name, args) in [("first.ogg", ["--comment", "TITLE=First", "--add-comment", "ARTIST=Band", "--add-comment", "ALBUM=Record"]),
                             ("second.flac", [])] {
            let seconds = name.hasSuffix("ogg") ? "30" : "5"
            let made = try await runProcess("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2"] + args
                                                + [folder.appendingPathComponent(name).path, "synth", seconds, "sine", "440"])
            try #require(made.status == 0, "sox could not make \(name): \(made.err)")
        }
        return 2
    }

    @Test func castsFromAMediaServerAndShowsItEverywhere() async throws {
        let socket = "/tmp/tonearm-upnp-mpd-\(getpid()).socket"
        let rig = try await UPnPRig("[mpd-protocol]\nenabled = true\nport = 0\nunix-socket = \"\(socket)\"\n", sink: "fakesink sync=true",
                                    media: Self.music)
        let d = rig.d
        let describe = try await rig.controlPointJSON(["describe", rig.location])
        let services = (describe["device"] as? [String: Any])?["services"] as? [String] ?? []
        #expect(services.sorted() == ["urn:schemas-upnp-org:service:AVTransport:1", "urn:schemas-upnp-org:service:ConnectionManager:1",
                                      "urn:schemas-upnp-org:service:RenderingControl:1"])
        let sink = try await rig.call("ConnectionManager", "GetProtocolInfo")["Sink"] ?? ""
        #expect(sink.contains("http-get:*:audio/ogg:*") && sink.contains("http-get:*:audio/x-flac:*"), "\(sink)")
        #expect(try await rig.call("AVTransport", "GetTransportInfo")["CurrentTransportState"] == "NO_MEDIA_PRESENT")
        #expect(try await rig.call("ConnectionManager", "GetCurrentConnectionIDs")["ConnectionIDs"] == "0")
        let connection = try await rig.call("ConnectionManager", "GetCurrentConnectionInfo", ["ConnectionID": "0"])
        #expect(connection["Direction"] == "Input" && connection["Status"] == "OK", "\(connection)")

        let first = try await rig.item("First")
        try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": first.url, "CurrentURIMetaData": first.didl])
        // Repeated, so that however slowly a loaded machine runs this test, the track is still there for each step.
        try await rig.call("AVTransport", "SetPlayMode", ["NewPlayMode": "REPEAT_ONE"])
        try await rig.call("AVTransport", "Play", ["Speed": "1"])
        try await d.waitFor("Playing over MPRIS") { try await d.status() == "Playing" }
        // The controller's DIDL-Lite is what MPRIS shows.
        let metadata = try await d.metadata()
        #expect(metadata["xesam:title"]?.stringValue == "First")
        #expect(metadata["xesam:artist"]?.arrayValue?.first?.stringValue == "Band")
        #expect(metadata["xesam:album"]?.stringValue == "Record")
        // The server's length, or the pipeline's own estimate once it has one (an Ogg over HTTP: a little under).
        #expect(metadata["mpris:length"]?.int64Value.map { abs($0 - 30_000_000) < 500_000 } == true, "\(metadata)")
        #expect(metadata["xesam:url"]?.stringValue == first.url)
        let transport = try await rig.call("AVTransport", "GetTransportInfo")
        #expect(transport["CurrentTransportState"] == "PLAYING")
        let media = try await rig.call("AVTransport", "GetMediaInfo")
        #expect(media["CurrentURI"] == first.url && media["NrTracks"] == "1", "\(media)")

        // Seek → position reported, over UPnP and MPRIS alike. Far in (20 s of 30), where playing on from the start would
        // not be for a while; read together, since the track comes round again (REPEAT_ONE) on a machine slow enough.
        try await rig.call("AVTransport", "Seek", ["Unit": "REL_TIME", "Target": "0:00:20"])
        try await d.waitFor("the position after the seek") {
            let position = try await rig.call("AVTransport", "GetPositionInfo")
            let mpris = try await d.position()
            return (position["RelTime"] ?? "") >= "0:00:20" && (position["TrackDuration"] ?? "") >= "0:00:29" && mpris >= 20_000_000
        }

        // Volume and mute are Tonearm's volume.
        try await rig.call("RenderingControl", "SetVolume", ["DesiredVolume": "30"])
        #expect(try await d.get(Daemon.player, "Volume").doubleValue == 0.3)
        try await rig.call("RenderingControl", "SetMute", ["DesiredMute": "1"])
        #expect(try await d.get(Daemon.player, "Volume").doubleValue == 0)
        #expect(try await rig.call("RenderingControl", "GetMute")["CurrentMute"].map { ["1", "True", "true"].contains($0) } == true)
        try await rig.call("RenderingControl", "SetMute", ["DesiredMute": "0"])
        #expect(try await rig.call("RenderingControl", "GetVolume")["CurrentVolume"] == "30")
        try await d.set(Daemon.player, "Volume", .double(0.55))
        #expect(try await rig.call("RenderingControl", "GetVolume")["CurrentVolume"] == "55")

        // The MPD face sees the cast and can pause it; the renderer reports what it did.
        let current = try await d.run("/usr/bin/mpc", ["-h", socket, "-f", "%title%", "current"])
        #expect(current.out == "First")
        _ = try await d.run("/usr/bin/mpc", ["-h", socket, "pause"])
        try await d.waitFor("PAUSED_PLAYBACK after mpc pause") {
            try await rig.call("AVTransport", "GetTransportInfo")["CurrentTransportState"] == "PAUSED_PLAYBACK"
        }
        try await rig.call("AVTransport", "Play", ["Speed": "1"])
        try await d.waitFor("Playing again") { try await d.status() == "Playing" }

        #expect(try await d.tonearm("status").out.contains("First"))

        // A second cast replaces the first (queue = "replace"), with metadata a phone app wrote itself: cover art too.
        let second = try await rig.item("second")
        let didl = """
            <DIDL-Lite xmlns="urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/" xmlns:dc="http://purl.org/dc/elements/1.1/" \
            xmlns:upnp="urn:schemas-upnp-org:metadata-1-0/upnp/"><item id="1" parentID="0" restricted="1"><dc:title>Cast &amp; title</dc:title>\
            <upnp:artist>Phone</upnp:artist><upnp:albumArtURI>http://127.0.0.1:8200/cover.jpg</upnp:albumArtURI>\
            <upnp:class>object.item.audioItem.musicTrack</upnp:class><res protocolInfo="http-get:*:audio/x-flac:*" duration="0:00:05">\
            \(second.url)</res></item></DIDL-Lite>
            """
        try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": second.url, "CurrentURIMetaData": didl])
        try await d.waitFor("the second cast playing") { try await d.metadata()["xesam:url"]?.stringValue == second.url }
        let cast = try await d.metadata()
        #expect(cast["xesam:title"]?.stringValue == "Cast & title")
        #expect(cast["xesam:artist"]?.arrayValue?.first?.stringValue == "Phone")
        #expect(cast["mpris:artUrl"]?.stringValue == "http://127.0.0.1:8200/cover.jpg")
        #expect(try await rig.call("AVTransport", "GetMediaInfo")["CurrentURIMetaData"] == didl)
        #expect(try await d.tracks().count == 1)
        #expect(try await d.status() == "Playing")
        try await rig.call("AVTransport", "Stop")
        try await d.waitFor("Stopped") { try await d.status() == "Stopped" }
        #expect(try await rig.call("AVTransport", "GetTransportInfo")["CurrentTransportState"] == "STOPPED")
    }

    @Test func inNextModeACastJoinsTheQueueAndTheTransportWalksIt() async throws {
        let rig = try await UPnPRig("queue = \"next\"", sink: "fakesink sync=true", media: Self.music)
        let d = rig.d
        let local = try d.sine("local.wav", seconds: 30)
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(local)]), .bool(true)])
        // The queue comes round, so that on a loaded machine nothing ends before the test is through with it.
        try await d.set(Daemon.player, "LoopStatus", .string("Playlist"))
        try await d.waitFor("the local file playing") { try await d.status() == "Playing" }
        let first = try await rig.item("First")
        try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": first.url, "CurrentURIMetaData": first.didl])
        // Played at once, in the status the player was in, after what was playing, which stays queued.
        try await d.waitFor("the cast playing") { try await d.metadata()["xesam:url"]?.stringValue == first.url }
        #expect(try await d.tracks().count == 2)
        #expect(try await d.status() == "Playing")
        var info = try await rig.call("AVTransport", "GetPositionInfo")
        #expect(info["Track"] == "2" && info["TrackURI"] == first.url, "\(info)")
        // The local file is not named on the network.
        try await rig.call("AVTransport", "Previous")
        try await d.waitFor("back on the local file") { try await d.metadata()["xesam:url"]?.stringValue == Daemon.uri(local) }
        info = try await rig.call("AVTransport", "GetPositionInfo")
        #expect(info["Track"] == "1" && info["TrackURI"] == "" && !(info["TrackMetaData"] ?? "").contains(local), "\(info)")
        try await rig.call("AVTransport", "Seek", ["Unit": "TRACK_NR", "Target": "2"])
        try await d.waitFor("the cast again") { try await d.metadata()["xesam:url"]?.stringValue == first.url }
        try await rig.call("AVTransport", "Seek", ["Unit": "ABS_TIME", "Target": "0:00:10"])
        try await d.waitFor("the position after ABS_TIME") { try await d.position() >= 10_000_000 }
        try await rig.call("AVTransport", "SetPlayMode", ["NewPlayMode": "SHUFFLE"])
        #expect(try await d.get(Daemon.player, "Shuffle").boolValue == true)
        #expect(try await rig.call("AVTransport", "GetTransportSettings")["PlayMode"] == "SHUFFLE")
        try await rig.call("AVTransport", "SetPlayMode", ["NewPlayMode": "REPEAT_ALL"])
        #expect(try await d.get(Daemon.player, "LoopStatus").stringValue == "Playlist")
        #expect(try await rig.call("AVTransport", "GetTransportSettings")["PlayMode"] == "REPEAT_ALL")
        // Next from the last entry of a looped queue comes round to the first.
        try await rig.call("AVTransport", "Next")
        try await d.waitFor("Next back on the local file") { try await d.metadata()["xesam:url"]?.stringValue == Daemon.uri(local) }
        let actions = try await rig.call("AVTransport", "GetCurrentTransportActions")["Actions"] ?? ""
        #expect(Set(actions.split(separator: ",")) == ["Pause", "Stop", "Seek", "Next", "Previous"], "\(actions)")
        #expect(try await rig.call("AVTransport", "GetDeviceCapabilities")["PlayMedia"] == "NETWORK")
    }

    @Test func eventsFollowChangesMadeAnywhereAndAGoneControllerLeavesMusicPlaying() async throws {
        let rig = try await UPnPRig(sink: "fakesink sync=true", media: Self.music)
        let d = rig.d
        let av = try rig.subscribe("AVTransport", log: "av.events")
        let rc = try rig.subscribe("RenderingControl", log: "rc.events")
        try await d.waitFor("the initial events") { rig.events("av.events").count >= 1 && rig.events("rc.events").count >= 1 }
        #expect(rig.events("av.events")[0]["TransportState"] == "NO_MEDIA_PRESENT")
        #expect(rig.events("rc.events")[0]["Volume"] == "100")

        let first = try await rig.item("First")
        try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": first.url, "CurrentURIMetaData": first.didl])
        try await rig.call("AVTransport", "SetPlayMode", ["NewPlayMode": "REPEAT_ONE"])
        try await rig.call("AVTransport", "Play", ["Speed": "1"])
        try await d.waitFor("PLAYING evented") { rig.events("av.events").contains { $0["TransportState"] == "PLAYING" } }
        #expect(rig.events("av.events").contains { $0["AVTransportURI"] == first.url })
        // A pause made over MPRIS is evented to the controller.
        _ = try await d.playerctl("pause")
        try await d.waitFor("PAUSED_PLAYBACK evented") { rig.events("av.events").last?["TransportState"] == "PAUSED_PLAYBACK" }
        try await d.set(Daemon.player, "Volume", .double(0.2))
        try await d.waitFor("the volume evented") { rig.events("rc.events").last?["Volume"] == "20" }

        // The controller goes away without unsubscribing: the music plays on, and events to it fail quietly.
        _ = try await d.playerctl("play")
        av.kill()
        rc.kill()
        _ = await av.wait()
        _ = await rc.wait()
        try await d.set(Daemon.player, "Volume", .double(0.4))
        try await d.waitFor("still Playing") { try await d.status() == "Playing" }
        #expect(try await rig.call("AVTransport", "GetTransportInfo")["CurrentTransportState"] == "PLAYING")
        #expect(d.process?.isRunning == true)
    }

    @Test func setNextJoinsTheTwoCastsGaplessly() async throws {
        // One sine cut in two at a sample inside it, served as two WAV files: the join must not be heard.
        let whole = WAV.sine(seconds: 2.4)
        let cut = Int(1.3 * 44100)
        let rig = try await UPnPRig(media: { folder in
            try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[..<(cut * 2)])).write(to: folder.appendingPathComponent("one.wav"))
            try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[(cut * 2)...])).write(to: folder.appendingPathComponent("two.wav"))
            return 2
        })
        let d = rig.d
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let one = try await rig.item("one"), two = try await rig.item("two")
        try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": one.url, "CurrentURIMetaData": one.didl])
        try await rig.call("AVTransport", "SetNextAVTransportURI", ["NextURI": two.url, "NextURIMetaData": two.didl])
        #expect(try await rig.call("AVTransport", "GetMediaInfo")["NextURI"] == two.url)
        try await rig.call("AVTransport", "Play", ["Speed": "1"])
        // Once the second plays, it is the transport's URI and nothing is next.
        try await d.waitFor("the second cast current") { try await rig.call("AVTransport", "GetMediaInfo")["CurrentURI"] == two.url }
        #expect(try await rig.call("AVTransport", "GetMediaInfo")["NextURI"] == "")
        try await d.waitForTheEnd("both played, then Stopped", after: changes)
        _ = await d.terminate()

        let rendered = try rig.d.rendering(rig.out).mono
        let audible = try #require(AudioCheck.trimmedRange(rendered))
        let body = Array(rendered[audible])
        #expect(abs(body.count - whole.frameCount) < 441, "rendered \(body.count) frames, expected \(whole.frameCount)")
        #expect(AudioCheck.longestSilence(body, threshold: 0) < 3, "a run of zeros means a gap")
        #expect(AudioCheck.largestJump(body) <= AudioTests.sineSlope, "a jump means a discontinuity at the join")
    }

    @Test func refusesWhatItMustNotDo() async throws {
        let secret = TemporaryDirectory("upnp-secret")
        let file = secret.file("private.txt")
        try "do not read".write(to: file, atomically: true, encoding: .utf8)
        let rig = try await UPnPRig("max-subscriptions = 3", sink: "fakesink sync=true")
        let d = rig.d
        // Only http(s) URLs are played: a local file, a path, another scheme are refused and nothing is queued.
        for uri in [URL(fileURLWithPath: file.path).absoluteString, file.path, "smb://nas/x.mp3", "http://"] {
            await #expect(throws: UPnPFault.self, "\(uri)") {
                try await rig.call("AVTransport", "SetAVTransportURI", ["CurrentURI": uri, "CurrentURIMetaData": ""])
            }
        }
        #expect(try await d.tracks().isEmpty)
        #expect(FileManager.default.fileExists(atPath: file.path))
        // UPnP's error codes, for calls the control point makes...
        for (service, action, args, code) in [
            ("AVTransport", "Play", ["Speed": "1"], 701), ("AVTransport", "GetTransportInfo", ["InstanceID": "7"], 718),
            ("RenderingControl", "GetVolume", ["InstanceID": "3"], 702), ("ConnectionManager", "GetCurrentConnectionInfo", ["ConnectionID": "5"], 706),
        ] as [(String, String, [String: String], Int)] {
            do {
                try await rig.call(service, action, args)
                Issue.record("\(action) \(args) was taken")
            } catch let fault as UPnPFault {
                #expect(fault.code == code, "\(action) \(args): \(fault)")
            }
        }
        // ...and for values outside the SCPD's lists and ranges, which it checks before sending.
        for (service, action, args, code) in [
            ("AVTransport", "Play", [("InstanceID", "0"), ("Speed", "2")], 717),
            ("AVTransport", "Seek", [("InstanceID", "0"), ("Unit", "FRAME"), ("Target", "1")], 710),
            ("AVTransport", "SetPlayMode", [("InstanceID", "0"), ("NewPlayMode", "DIRECT_1")], 712),
            ("AVTransport", "Play", [("InstanceID", "0")], 402),
            ("RenderingControl", "SetVolume", [("InstanceID", "0"), ("Channel", "Master"), ("DesiredVolume", "101")], 402),
            ("RenderingControl", "SetVolume", [("InstanceID", "0"), ("Channel", "LF"), ("DesiredVolume", "10")], 402),
        ] {
            let request = d.home.file("call.xml")
            try UPnPRig.envelope(service, action, args).write(to: request, atomically: true, encoding: .utf8)
            let answer = try await rig.curl("POST", rig.base + "/upnp/control/\(service)",
                                            headers: ["SOAPACTION: \"urn:schemas-upnp-org:service:\(service):1#\(action)\""], body: request)
            #expect(answer.status == 500 && answer.body.contains("<errorCode>\(code)</errorCode>"), "\(action) \(args): \(answer)")
        }
        // Raw requests no control point would send.
        let control = rig.base + "/upnp/control/AVTransport"
        let soap = ["Content-Type: text/xml; charset=\"utf-8\"", "SOAPACTION: \"urn:schemas-upnp-org:service:AVTransport:1#Play\""]
        let unknown = d.home.file("unknown.xml")
        try UPnPRig.envelope("AVTransport", "Fly", [("InstanceID", "0")]).write(to: unknown, atomically: true, encoding: .utf8)
        let answer = try await rig.curl("POST", control, headers: ["SOAPACTION: \"urn:schemas-upnp-org:service:AVTransport:1#Fly\""], body: unknown)
        #expect(answer.status == 500 && answer.body.contains("<errorCode>401</errorCode>"), "\(answer)")
        let xxe = d.home.file("xxe.xml")
        try """
            <?xml version="1.0"?><!DOCTYPE s [<!ENTITY x SYSTEM "\(URL(fileURLWithPath: file.path).absoluteString)">]>\
            <s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><u:Play xmlns:u="urn:schemas-upnp-org:service:AVTransport:1">\
            <InstanceID>&x;</InstanceID><Speed>1</Speed></u:Play></s:Body></s:Envelope>
            """.write(to: xxe, atomically: true, encoding: .utf8)
        let entity = try await rig.curl("POST", control, headers: soap, body: xxe)
        #expect(entity.status == 500 && entity.body.contains("<errorCode>402</errorCode>") && !entity.body.contains("do not read"), "\(entity)")
        let garbage = d.home.file("garbage.bin")
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: garbage)
        #expect(try await rig.curl("POST", control, headers: soap, body: garbage).status == 500)
        let huge = d.home.file("huge.xml")
        try Data(repeating: 0x41, count: 1 << 20).write(to: huge)
        #expect(try await rig.curl("POST", control, headers: soap, body: huge).status == 413)

        // Subscriptions: a callback on another machine is refused, the count is capped, a renewal needs a known SID.
        let events = rig.base + "/upnp/event/AVTransport"
        let elsewhere = try await rig.curl("SUBSCRIBE", events, headers: ["CALLBACK: <http://192.0.2.7:9/cb>", "NT: upnp:event", "TIMEOUT: Second-60"])
        #expect(elsewhere.status == 412)
        var statuses: [Int] = []
        for _ in 0..<4 {
            statuses.append(try await rig.curl("SUBSCRIBE", events, headers: ["CALLBACK: <http://127.0.0.1:9/cb>", "NT: upnp:event", "TIMEOUT: Second-60"]).status)
        }
        #expect(statuses == [200, 200, 200, 503])
        #expect(try await rig.curl("SUBSCRIBE", events, headers: ["SID: uuid:nobody", "TIMEOUT: Second-60"]).status == 412)
        #expect(try await rig.curl("UNSUBSCRIBE", events, headers: ["SID: uuid:nobody"]).status == 412)
        #expect(d.process?.isRunning == true)
        #expect(try await rig.call("AVTransport", "GetTransportInfo")["CurrentTransportState"] == "NO_MEDIA_PRESENT")
    }

    @Test func subscriptionsExpireAndAnEventFloodCostsOneEvent() async throws {
        let rig = try await UPnPRig(sink: "fakesink sync=true")
        let d = rig.d
        let events = rig.base + "/upnp/event/RenderingControl"
        // A subscriber that never renews: gone after its time, its SID no longer known.
        let answer = try await NetworkNamespace.run(in: d, "/usr/bin/curl", ["-s", "-D", "-", "-o", "/dev/null", "-X", "SUBSCRIBE",
                                                                             "-H", "CALLBACK: <http://127.0.0.1:9/cb>", "-H", "NT: upnp:event",
                                                                             "-H", "TIMEOUT: Second-1", events], environment: rig.environment)
        let sid = try #require(answer.out.split(separator: "\r\n").first { $0.uppercased().hasPrefix("SID:") }?.dropFirst(4)
            .trimmingCharacters(in: .whitespaces), "\(answer.out)")
        try await d.waitFor("the subscription to expire") { d.log.contains("subscription \(sid) expired") }
        #expect(try await rig.curl("SUBSCRIBE", events, headers: ["SID: \(sid)", "TIMEOUT: Second-60"]).status == 412)
        // Renewed in time, a subscription lives on; unsubscribed, it is gone.
        let kept = try await NetworkNamespace.run(in: d, "/usr/bin/curl", ["-s", "-D", "-", "-o", "/dev/null", "-X", "SUBSCRIBE",
                                                                           "-H", "CALLBACK: <http://127.0.0.1:9/cb>", "-H", "NT: upnp:event",
                                                                           "-H", "TIMEOUT: Second-60", events], environment: rig.environment)
        let keptSID = try #require(kept.out.split(separator: "\r\n").first { $0.uppercased().hasPrefix("SID:") }?.dropFirst(4)
            .trimmingCharacters(in: .whitespaces), "\(kept.out)")
        let renewed = try await NetworkNamespace.run(in: d, "/usr/bin/curl", ["-s", "-D", "-", "-o", "/dev/null", "-X", "SUBSCRIBE",
                                                                              "-H", "SID: \(keptSID)", "-H", "TIMEOUT: Second-120", events],
                                                     environment: rig.environment)
        #expect(renewed.out.hasPrefix("HTTP/1.1 200") && renewed.out.contains("Second-120"), "\(renewed.out)")
        #expect(try await rig.curl("UNSUBSCRIBE", events, headers: ["SID: \(keptSID)"]).status == 200)
        #expect(try await rig.curl("SUBSCRIBE", events, headers: ["SID: \(keptSID)", "TIMEOUT: Second-60"]).status == 412)

        // Two hundred volume changes while a subscriber listens: it is sent far fewer events, the last one right.
        let listener = try rig.subscribe("RenderingControl", log: "rc.events")
        try await d.waitFor("the initial event") { !rig.events("rc.events").isEmpty }
        for i in 0..<200 { try await d.set(Daemon.player, "Volume", .double(Double(i % 100) / 100)) }
        try await d.set(Daemon.player, "Volume", .double(0.77))
        try await d.waitFor("the last volume evented") { rig.events("rc.events").last?["Volume"] == "77" }
        #expect(rig.events("rc.events").count < 100, "\(rig.events("rc.events").count) events")
        #expect(try await rig.call("RenderingControl", "GetVolume")["CurrentVolume"] == "77")
        listener.kill()
    }

    @Test func keepsItsNameAndSaysByebye() async throws {
        let rig = try await UPnPRig("interface = \"lo\"", sink: "fakesink sync=true")
        let d = rig.d
        #expect(URL(string: rig.location)?.host == "127.0.0.1", "served on the interface's address: \(rig.location)")
        let config = try await d.tonearm("config").out
        #expect(config.contains("interface") && config.contains("\"lo\""), "\(config)")
        let udn = try #require(try await rig.controlPointJSON(["describe", rig.location])["device"] as? [String: Any])["udn"] as? String
        let kept = try String(contentsOf: d.home.file("data/tonearm/upnp/uuid"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(udn == "uuid:" + kept)
        // A listener on the SSDP group hears the byebye when the daemon stops.
        let listener = try rig.spawn(rig.python, ["-c", UPnPRendererTests.ssdpListener], log: "ssdp.log")
        try await d.waitFor("the listener") { ((try? String(contentsOf: d.home.file("ssdp.log"), encoding: .utf8)) ?? "").contains("listening") }
        #expect(await d.terminate() == 0)
        try await d.waitFor("byebye") {
            let heard = (try? String(contentsOf: d.home.file("ssdp.log"), encoding: .utf8)) ?? ""
            return heard.contains("ssdp:byebye") && heard.contains(kept)
        }
        listener.kill()
        // Started again, it is the same device to controllers.
        try await d.start(sink: "fakesink sync=true")
        let again = try await rig.controlPointJSON(["discover", "--timeout", "60", "--first"])
        let udns = (again["devices"] as? [[String: Any]] ?? []).compactMap { $0["udn"] as? String }
        #expect(udns == [udn ?? "?"], "\(again)")
    }

    /// Joins the SSDP group and prints every NOTIFY's NTS and USN.
    static let ssdpListener = #"""
        import socket, struct, sys
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("", 1900))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("4s4s", socket.inet_aton("239.255.255.250"), socket.inet_aton("127.0.0.1")))
        print("listening", flush=True)
        while True:
            data, _ = s.recvfrom(8192)
            head = {l.split(":", 1)[0].upper(): l.split(":", 1)[1].strip() for l in data.decode(errors="replace").split("\r\n")[1:] if ":" in l}
            if data.startswith(b"NOTIFY"):
                print(head.get("NTS"), head.get("USN"), flush=True)
        """#
}

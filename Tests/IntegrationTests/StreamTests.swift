import DBus
import DaemonHarness
import Foundation
import Synchronization
import TestSupport
import Testing

/// Network streams through the real daemon: a real Icecast fed by a real source client, a Range-capable HTTP server,
/// and servers that fail in each way a network does.
@Suite(.serialized, .timeLimit(.minutes(4))) struct StreamTests {
    /// Raw mono 16-bit audio at 44.1 kHz, so a stream cut off at any moment is still read whole; synchronised to the
    /// clock as a sound card is (a sink that takes data as fast as it comes keeps a network buffer empty).
    static func rawSink(_ path: String) -> String {
        "audioconvert ! audioresample ! audio/x-raw,format=S16LE,channels=1,rate=44100 ! filesink sync=true location=\(path)"
    }

    /// A 128 kb/s constant-rate MP3 of `buffers` × 1024 samples of a test tone (the pace the fault servers serve at
    /// is worked out from that rate).
    static func constantRateMP3(_ file: URL, buffers: Int) async throws -> URL {
        let made = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=\(buffers)", "!", "audioconvert", "!", "lamemp3enc",
                                        "target=bitrate", "bitrate=128", "cbr=true", "!", "filesink", "location=\(file.path)"])
        try #require(made.status == 0, "\(made.err)")
        return file
    }

    /// A test server whose live routes serve an MP3 of `buffers` × 1152 samples of a test tone; its folder is kept
    /// for as long as the caller holds it.
    static func liveServer(buffers: Int) async throws -> (TemporaryDirectory, TestHTTPServer) {
        let files = TemporaryDirectory("tonearm-served")
        let live = files.file("live.mp3")
        let made = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=\(buffers)", "!", "audioconvert", "!", "lamemp3enc", "!", "filesink", "location=\(live.path)"])
        try #require(made.status == 0, "\(made.err)")
        return (files, try await TestHTTPServer(root: files.url, liveFile: live))
    }

    /// A dominant frequency by zero crossings (good enough for a clean sine).
    static func frequency(_ samples: ArraySlice<Int16>, rate: Int = 44100) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        for s in samples.dropFirst() {
            if (previous < 0) != (s < 0) { crossings += 1 }
            previous = s
        }
        return Double(crossings) / 2 / (Double(samples.count) / Double(rate))
    }

    /// The song a live station plays now is named from the first ICY metadata block of Icecast's first burst, read
    /// beside the pipeline, not only once the audio carrying it has gone through the buffers and is heard: held paused
    /// right after OpenUri, no sink can report it, yet Metadata names it; then it plays.
    @Test func aStationsCurrentSongIsNamedWhenItIsOpened() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/now.mp3", station: "Now FM")
        try await icecast.setTitle("Bill Evans - Peace Piece", mount: "/now.mp3")
        // Icecast hands a new listener that title in its first metadata block, once its burst holds a block's worth.
        let probe = #"""
        import socket, sys
        s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)
        s.sendall(b'GET /now.mp3 HTTP/1.0\r\nIcy-MetaData: 1\r\n\r\n')
        data = b''
        while b'\r\n\r\n' not in data: data += s.recv(65536)
        head, body = data.split(b'\r\n\r\n', 1)
        metaint = int([l.split(b':')[1] for l in head.split(b'\r\n') if l.lower().startswith(b'icy-metaint')][0])
        s.settimeout(2)
        try:
            while len(body) < metaint + 1 + 255 * 16: body += s.recv(65536) or b''
        except Exception: pass
        if len(body) > metaint: print(body[metaint + 1: metaint + 1 + body[metaint] * 16].split(b"';")[0].decode())
        """#
        let port = String(URL(string: icecast.url("/now.mp3"))!.port!)
        let ready = try await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            try await runProcess("/usr/bin/python3", ["-c", probe, port]).out.contains("Bill Evans - Peace Piece")
        }
        try #require(ready, "Icecast never served the title in a first burst")
        let d = try Daemon()
        try await d.start(sink: Self.rawSink(d.media.file("now.raw").path))
        _ = try await d.call(Daemon.player, "OpenUri", [.string(icecast.url("/now.mp3"))])
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("the song named while paused") { try await d.metadata()["xesam:title"]?.stringValue == "Peace Piece" }
        let m = try await d.metadata()
        #expect(m["xesam:artist"]?.arrayValue?.compactMap(\.stringValue) == ["Bill Evans"])
        #expect(m["tonearm:station"]?.stringValue == "Now FM")
        _ = try await d.call(Daemon.player, "Play")
        try await d.waitFor("playing") {
            let status = try await d.status(), position = try await d.position()
            return status == "Playing" && position > 300_000
        }
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "Peace Piece", "the same song, heard")
    }

    @Test func liveIcecastStreamPlaysWithStationAndSongTitles() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/radio.mp3", station: "Tonearm Test FM", frequency: 440)
        let d = try Daemon()
        let out = d.media.file("radio.raw")
        let properties = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let trackSignals = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.trackList, member: "TrackMetadataChanged"))
        let buffering = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "BufferingChanged"))
        try await d.start(["--verbose"], sink: Self.rawSink(out.path))

        let schemes = (try await d.get("org.mpris.MediaPlayer2", "SupportedUriSchemes").arrayValue ?? []).compactMap(\.stringValue)
        #expect(Set(["file", "http", "https", "icy", "icyx"]).isSubset(of: Set(schemes)), "\(schemes)")
        let types = (try await d.get("org.mpris.MediaPlayer2", "SupportedMimeTypes").arrayValue ?? []).compactMap(\.stringValue)
        #expect(types.contains("audio/x-scpls") && types.contains("audio/x-mpegurl") && types.contains("application/xspf+xml"))

        _ = try await d.call(Daemon.player, "OpenUri", [.string(icecast.url("/radio.mp3"))])
        var last = ""
        let playing = try await eventually(timeout: .seconds(45)) {
            let status = try await d.status(), position = try await d.position()
            last = "\(status) at \(position) µs, buffering \(try await d.get(Daemon.tonearm, "Buffering"))"
            return status == "Playing" && position > 500_000
        }
        try #require(playing, "the stream is not playing: \(last)\n\(d.log.suffix(6000))")
        var m = try await d.metadata()
        #expect(m["mpris:length"] == nil, "a live stream has no length: \(m)")
        #expect(m["tonearm:station"]?.stringValue == "Tonearm Test FM")
        #expect(m["xesam:title"]?.stringValue?.isEmpty == false, "a title from the start (the stream's, else the station)")
        #expect(try await d.get(Daemon.player, "CanSeek").boolValue == false)
        let id = try await d.trackID()
        let before = try await d.position()
        await expectRefusedSeek(d, id)
        #expect(try await d.position() >= before, "Position counts on from the start of listening")

        // Titles pushed through Icecast's metadata update arrive as ICY StreamTitle: title and artist apart.
        try await icecast.setTitle("Bill Evans - Peace Piece", mount: "/radio.mp3")
        try await d.waitFor("the first song title") { try await d.metadata()["xesam:title"]?.stringValue == "Peace Piece" }
        m = try await d.metadata()
        #expect(m["xesam:artist"]?.arrayValue?.compactMap(\.stringValue) == ["Bill Evans"])
        #expect(m["tonearm:station"]?.stringValue == "Tonearm Test FM", "the station stays apart from the song")
        #expect(m["mpris:trackid"]?.stringValue == id, "a new song on the same stream is the same track")
        try await icecast.setTitle("Ahmad Jamal - Poinciana", mount: "/radio.mp3")
        try await d.waitFor("the second song title") { try await d.metadata()["xesam:title"]?.stringValue == "Poinciana" }

        // Both changes were announced: PropertiesChanged on Player and TrackMetadataChanged on TrackList.
        // (The signals may reach this client a moment after the property reads: wait for them.)
        try await d.waitFor("both titles announced") {
            let announced = properties.named("PropertiesChanged").compactMap { $0.arguments[1].vardictValue?["Metadata"]?.vardictValue?["xesam:title"]?.stringValue }
            let changed = trackSignals.signals.compactMap { $0.arguments[1].vardictValue?["xesam:title"]?.stringValue }
            return announced.contains("Peace Piece") && announced.contains("Poinciana") && changed.contains("Peace Piece") && changed.contains("Poinciana")
        }
        // Buffering was reported while the stream filled up, and it is full now.
        #expect(!buffering.signals.isEmpty, "no BufferingChanged while a network stream started")
        try await d.waitFor("a full buffer") { try await d.get(Daemon.tonearm, "Buffering").int64Value == 100 }
        try await d.waitFor("a few seconds heard") { (try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0 > 3 * 88200 }
        _ = await d.terminate()

        // What was heard is the source's 440 Hz sine.
        let samples = WAV(raw: try Data(contentsOf: out), sampleRate: 44100, channels: 1).samples
        let audible = try #require(AudioCheck.trimmedRange(samples))
        let middle = samples[audible].dropFirst(44100).prefix(88200)
        #expect(middle.count > 44100)
        #expect(abs(Self.frequency(middle) - 440) < 15, "heard \(Self.frequency(middle)) Hz")
    }

    @Test func anIcecastStreamThatDropsIsReconnectedAndPlaysOn() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/drop.mp3", station: "Drop FM")
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nreconnect-attempts = 30\nreconnect-delay = 0.5\nreconnect-max-delay = 1\n")
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start(["--verbose"]) // the log names each start of the stream
        _ = try await d.call(Daemon.player, "OpenUri", [.string(icecast.url("/drop.mp3"))])
        var start: [String] = []
        let playing = try await eventually(timeout: .seconds(45), interval: .milliseconds(250)) {
            let status = try await d.status(), position = try await d.position()
            start.append("\(position / 1000) ms \(status) buffering \(try await d.get(Daemon.tonearm, "Buffering").int64Value ?? -1)")
            return status == "Playing" && position > 500_000
        }
        try #require(playing, "never playing:\n\(start.suffix(30).joined(separator: "\n"))\n\(d.log.split(separator: "\n").suffix(30).joined(separator: "\n"))")
        let id = try await d.trackID()
        // The source goes away (Icecast closes its listeners), then comes back.
        icecast.stopSources()
        try await d.waitFor("the drop noticed", timeout: .seconds(60)) { d.log.contains("reconnecting in") }
        try await icecast.startMP3Source(mount: "/drop.mp3", station: "Drop FM")
        var last = ""
        let again = try await eventually(timeout: .seconds(60)) {
            let level = try await d.get(Daemon.tonearm, "Buffering").int64Value, status = try await d.status()
            last = "\(status), buffering \(level ?? -1), \(d.log.components(separatedBy: "started #").count - 1) starts"
            return level == 100 && status == "Playing" && d.log.components(separatedBy: "started #").count > 2
        }
        let interesting = d.log.split(separator: "\n").filter { $0.contains("reconnect") || $0.contains("started #") || $0.contains("failed") }
        try #require(again, "not playing again: \(last)\n\(interesting.suffix(30).joined(separator: "\n"))")
        let resumed = try await d.position()
        // Once the position held here after a reconnect (playbin stuck short of PLAYING, now nudged and then failed by
        // the playback machine's state check): the trace below says where it held, if it ever does again.
        var trace: [String] = []
        let moved = try await eventually(timeout: .seconds(45), interval: .milliseconds(250)) {
            let position = try await d.position(), level = try await d.get(Daemon.tonearm, "Buffering").int64Value ?? -1
            trace.append("\(position / 1000) ms \(try await d.status()) buffering \(level)")
            return position > resumed + 500_000
        }
        if !moved {
            let lines = d.log.split(separator: "\n").suffix(40).joined(separator: "\n")
            Issue.record("the position held at \(resumed / 1000) ms after the reconnect:\n\(trace.suffix(30).joined(separator: "\n"))\n\(lines)")
        }
        #expect(try await d.trackID() == id, "the same track, reconnected")
        #expect(try await d.tracks().count == 1)
        #expect(failed.signals.isEmpty, "a stream that came back is no failure: \(failed.signals)")
        _ = await d.terminate()
    }

    @Test func chainedOggTitlesFromEzstreamUpdateTheTrack() async throws {
        let icecast = try await Icecast()
        // Two Ogg Vorbis files with their own comments; ezstream sends them one after the other, unaltered: each is a
        // new chain of the one Ogg stream, carrying its own title and artist.
        let media = TemporaryDirectory("tonearm-ogg")
        for (title, artist, frequency) in [("One", "Alpha", 440), ("Two", "Beta", 660)] {
            try await Self.taggedOgg(media.file("\(title).ogg"), encoder: "vorbisenc", buffers: 130, frequency: frequency, title: title, artist: artist)
        }
        try "\(media.file("One.ogg").path)\n\(media.file("Two.ogg").path)\n".write(to: media.file("list.txt"), atomically: true, encoding: .utf8)
        let config = media.file("ezstream.xml")
        try """
            <ezstream>
              <servers><server><hostname>127.0.0.1</hostname><port>\(icecast.port)</port><password>\(Icecast.sourcePassword)</password></server></servers>
              <streams><stream><mountpoint>/chain.ogg</mountpoint><format>Ogg</format><stream_name>Chain Radio</stream_name></stream></streams>
              <intakes><intake><type>playlist</type><filename>\(media.file("list.txt").path)</filename></intake></intakes>
            </ezstream>
            """.write(to: config, atomically: true, encoding: .utf8)
        chmod(config.path, 0o600) // ezstream refuses a config others can read (it holds the password)
        try await icecast.startEzstream(config: config, mount: "/chain.ogg")
        try await Self.expectChainTitles(icecast.url("/chain.ogg"), [("One", "Alpha"), ("Two", "Beta")])
    }

    /// Chained Ogg Opus: ezstream 1.0.2 and Icecast 2.4.4 neither pace nor list an Ogg Opus mount, so the chains come
    /// from the test's own server, live (no length), one Opus file with its own OpusTags after the other.
    @Test func chainedOpusTitlesUpdateTheTrack() async throws {
        let media = TemporaryDirectory("tonearm-opus")
        var chain = Data()
        for (title, artist, frequency) in [("Uno", "Gamma", 440), ("Dos", "Delta", 660)] {
            let file = media.file("\(title).opus")
            try await Self.taggedOgg(file, encoder: "opusenc", buffers: 200, frequency: frequency, title: title, artist: artist)
            chain.append(try Data(contentsOf: file))
        }
        let live = media.file("chain.opus")
        try chain.write(to: live)
        let server = try await TestHTTPServer(root: media.url, liveFile: live)
        try await Self.expectChainTitles(server.url("/live-ogg"), [("Uno", "Gamma"), ("Dos", "Delta")])
    }

    /// An Ogg file of a sine whose comments (Vorbis comments or OpusTags) carry `title` and `artist`.
    static func taggedOgg(_ file: URL, encoder: String, buffers: Int, frequency: Int, title: String, artist: String) async throws {
        let made = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=\(buffers)", "freq=\(frequency)", "!", "audioconvert", "!",
                                        "taginject", "tags=title=\(title),artist=\(artist)", "!", encoder, "!", "oggmux", "!",
                                        "filesink", "location=\(file.path)"])
        try #require(made.status == 0, "\(made.err)")
    }

    /// Opens the live Ogg stream at `url` (station "Chain Radio") and expects each chain's title and artist in Metadata
    /// and in TrackMetadataChanged, with no length.
    static func expectChainTitles(_ url: String, _ chains: [(title: String, artist: String)]) async throws {
        let d = try Daemon()
        let trackSignals = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.trackList, member: "TrackMetadataChanged"))
        try await d.start()
        _ = try await d.call(Daemon.player, "OpenUri", [.string(url)])
        var seen: [String] = []
        try await d.waitFor("every chain's title", timeout: .seconds(60)) {
            let m = try await d.metadata()
            let entry = "\(m["xesam:artist"]?.arrayValue?.first?.stringValue ?? "") - \(m["xesam:title"]?.stringValue ?? "")"
            if seen.last != entry { seen.append(entry) }
            return chains.allSatisfy { seen.contains("\($0.artist) - \($0.title)") }
        }
        #expect(try await d.metadata()["tonearm:station"]?.stringValue == "Chain Radio")
        #expect(try await d.metadata()["mpris:length"] == nil)
        // The signal leaves from the faces' event subscriber, apart from the reply to a Get: it may come a moment later.
        var changed: [String] = []
        let signalled = await eventually(timeout: .seconds(30)) {
            changed = trackSignals.signals.compactMap { $0.arguments[1].vardictValue?["xesam:title"]?.stringValue }
            return chains.allSatisfy { changed.contains($0.title) }
        }
        #expect(signalled, "\(changed)")
        _ = await d.terminate()
    }

    func expectRefusedSeek(_ d: Daemon, _ id: String) async {
        // The spec: SetPosition on a track that cannot seek does nothing.
        _ = try? await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(60_000_000)])
        #expect((try? await d.position()) ?? 0 < 60_000_000)
    }

    @Test func stationPlaylistLinkPlaysTheStation() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/jazz.mp3", station: "Jazz Station")
        let lists = TemporaryDirectory("tonearm-lists")
        try "[playlist]\nNumberOfEntries=2\nFile1=\(icecast.url("/jazz.mp3"))\nTitle1=Jazz\nFile2=file:///etc/passwd\nVersion=2\n"
            .write(to: lists.file("jazz.pls"), atomically: true, encoding: .utf8)
        let server = try await TestHTTPServer(root: lists.url)
        let d = try Daemon()
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start()
        _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/jazz.pls"))])
        try await d.waitFor("the station playing") {
            let status = try await d.status(), station = try await d.metadata()["tonearm:station"]?.stringValue
            return status == "Playing" && station == "Jazz Station"
        }
        let tracks = try await d.tracks()
        #expect(tracks.count == 1, "the local entry of a network playlist is refused: \(tracks)")
        // The signal is sent before the station plays, but the recorder takes it in a task of its own: wait for it.
        try await d.waitFor("the local entry reported as refused") {
            failed.signals.contains { $0.arguments[1].stringValue == "file:///etc/passwd" && $0.arguments[2].stringValue == "org.tonearm.Error.RefusedEntry" }
        }

        // The command line takes stream URLs too, and SHOUTcast's icy:// name for http://.
        let icy = icecast.url("/jazz.mp3").replacingOccurrences(of: "http://", with: "icy://")
        let played = try await d.tonearm("play", icy)
        #expect(played.status == 0, "\(played.out)")
        try await d.waitFor("the icy:// stream playing") {
            let m = try await d.metadata()
            return m["xesam:url"]?.stringValue == icy && m["tonearm:station"]?.stringValue == "Jazz Station"
        }
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let missing = try await d.tonearm("play", icecast.url("/no-such-mount.mp3"))
        #expect(missing.status == 1, "a 404 is refused by the command line too: \(missing)")
        _ = await d.terminate()
    }

    @Test func aPlaylistUnderAPlainNameIsFoundAndPlayed() async throws {
        let (files, server) = try await Self.liveServer(buffers: 400)
        defer { withExtendedLifetime(files) {} }
        let d = try Daemon()
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start()
        let station = server.url("/station")
        _ = try await d.call(Daemon.player, "OpenUri", [.string(station)])
        // Played at once as a stream; when the pipeline cannot, the source finds the playlist and it plays in its place.
        try await d.waitFor("the playlist's station playing") {
            let m = try await d.metadata()
            return try await d.status() == "Playing" && m["xesam:url"]?.stringValue == server.url("/live-closes")
                && m["tonearm:station"]?.stringValue == "Fault Radio"
        }
        let listed = try await d.call(Daemon.trackList, "GetTracksMetadata", [.objectPathArray(try await d.tracks())]).first?.arrayValue ?? []
        let uris = listed.compactMap { $0.unwrapped.vardictValue?["xesam:url"]?.unwrapped.stringValue }
        #expect(uris == [server.url("/live-closes")], "the playlist's entry took its place: \(uris)")
        #expect(failed.signals.isEmpty, "a playlist found is no failure: \(failed.signals)")
        _ = await d.terminate()
    }

    @Test func remoteFilesAreSeekableAndJoinGaplessly() async throws {
        let d = try Daemon()
        let whole = WAV.sine(seconds: 2.4)
        let cut = Int(1.3 * 44100)
        let files = TemporaryDirectory("tonearm-served")
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[..<(cut * 2)])).write(to: files.file("first.wav"))
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[(cut * 2)...])).write(to: files.file("second.wav"))
        let server = try await TestHTTPServer(root: files.url)
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([server.url("/first.wav"), server.url("/second.wav")], sink: "wavenc ! filesink location=\(out.path)")
        try await d.waitFor("both played, then Stopped", timeout: .seconds(60)) {
            try await d.status() == "Stopped" && FileManager.default.fileExists(atPath: out.path)
        }
        _ = await d.terminate()
        let rendered = try d.rendering(out).mono
        let body = Array(rendered[try #require(AudioCheck.trimmedRange(rendered))])
        #expect(abs(body.count - whole.frameCount) < 441, "rendered \(body.count) frames, expected \(whole.frameCount)")
        #expect(AudioCheck.longestSilence(body, threshold: 0) < 3, "a run of zeros means a gap")
        #expect(AudioCheck.largestJump(body) <= AudioTests.sineSlope, "a jump means a discontinuity at the join")
        let metadata = changes.named("PropertiesChanged").compactMap { $0.arguments[1].vardictValue?["Metadata"]?.vardictValue }
        #expect(metadata.contains { $0["xesam:title"]?.stringValue == "second" && $0["mpris:length"]?.int64Value.map { abs($0 - 1_100_000) < 20_000 } == true },
                "a remote file has its length: \(metadata)")
        let seekable = changes.named("PropertiesChanged").compactMap { $0.arguments[1].vardictValue?["CanSeek"]?.boolValue }
        #expect(seekable.contains(true))
    }

    /// The configured User-Agent and the proxy of `http_proxy` are used for real, by the header probe and by
    /// GStreamer's HTTP source alike: the origin named in the URL does not exist, so only the proxy can serve it.
    @Test func theUserAgentAndTheEnvironmentsProxyAreUsed() async throws {
        let d = try Daemon()
        let files = TemporaryDirectory("tonearm-served")
        try WAV.sine(seconds: 1).write(to: files.file("tone.wav"))
        let proxy = try await TestHTTPServer(root: files.url)
        let nowhere = try freeLoopbackPort() // nothing listens there
        try d.writeConfig("[plugins.streams]\nuser-agent = \"TonearmTest/9 (proxy check)\"\n")
        d.extraEnvironment["http_proxy"] = "http://127.0.0.1:\(proxy.port)"
        d.extraEnvironment["no_proxy"] = ""
        d.extraEnvironment["NO_PROXY"] = ""
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start(sink: "fakesink sync=true")
        let url = "http://127.0.0.1:\(nowhere)/tone.wav"
        _ = try await d.call(Daemon.player, "OpenUri", [.string(url)])
        try await d.waitForTheEnd("the song played through the proxy", after: changes)
        let asked = proxy.proxied
        #expect(!asked.isEmpty, "GStreamer's source asks the proxy: \(asked)")
        #expect(asked.allSatisfy { $0 == "\(url) TonearmTest/9 (proxy check)" }, "\(asked)")
        #expect(proxy.requests.allSatisfy { $0.contains(url) }, "nothing went around the proxy: \(proxy.requests)")
    }

    @Test func seekInARemoteFileLandsWhereAsked() async throws {
        // A ramp: each sample tells the frame it came from (frame / 8), so the rendered audio shows where a seek landed.
        let frames = 5 * 44100
        let ramp = WAV(sampleRate: 44100, channels: 1, samples: (0..<frames).map { Int16($0 / 8) })
        let files = TemporaryDirectory("tonearm-served")
        try ramp.write(to: files.file("ramp.wav"))
        let server = try await TestHTTPServer(root: files.url)
        let d = try Daemon()
        let out = d.media.file("rendered.raw")
        try await d.start(sink: Self.rawSink(out.path))
        // Queued as a file would be: TrackList.AddTrack of the URL, then Play.
        _ = try await d.call(Daemon.trackList, "AddTrack", [.string(server.url("/ramp.wav")),
                                                           .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .bool(true)])
        #expect(try await d.tracks().count == 1)
        _ = try await d.call(Daemon.player, "Play")
        try await d.waitFor("seekable and playing") {
            let status = try await d.status(), seekable = try await d.get(Daemon.player, "CanSeek").boolValue
            return status == "Playing" && seekable == true
        }
        let id = try await d.trackID()
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(3_000_000)])
        try await d.waitFor("played to the end") { try await d.status() == "Stopped" }
        _ = await d.terminate()
        #expect(server.requests.contains { $0.hasPrefix("GET /ramp.wav bytes=") && !$0.hasSuffix("bytes=0-") }, "the seek asked for a range: \(server.requests)")
        let samples = WAV(raw: try Data(contentsOf: out), sampleRate: 44100, channels: 1).samples
        // The jump forward: the first sample after it is where the seek landed.
        // (A seek made before the first buffer was heard shows as audio that starts there.)
        let jump = zip(samples.indices, samples.indices.dropFirst()).first { Int(samples[$0.1]) - Int(samples[$0.0]) > 1000 }
        let first = try #require(jump?.1 ?? samples.indices.first)
        let landed = Double(samples[first]) * 8 / 44100
        #expect(abs(landed - 3.0) < 0.05, "the seek to 3 s landed at \(landed) s")
    }

    @Test func httpsTrustsTheSystemsCAsAndTheConfiguredOne() async throws {
        let pki = try await TestPKI()
        let files = TemporaryDirectory("tonearm-served")
        try WAV.sine(seconds: 1.5).write(to: files.file("tone.wav"))
        let server = try await TestHTTPServer(root: files.url, tls: pki)
        try "#EXTM3U\n#EXTINF:2,Tone\n\(server.url("/tone.wav"))\n".write(to: files.file("list.m3u"), atomically: true, encoding: .utf8)

        // A server whose CA is not trusted: a named error. A playlist is read before it is queued, so its OpenUri
        // says so; a stream is taken at once and fails as it is played.
        let untrusting = try Daemon()
        let untrusted = try await SignalRecorder(untrusting.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await untrusting.start()
        do {
            _ = try await untrusting.call(Daemon.player, "OpenUri", [.string(server.url("/list.m3u"))])
            Issue.record("OpenUri of a playlist on an untrusted server should fail")
        } catch let e as DBusError {
            #expect(e.name == "org.tonearm.Error.TLSError" && e.message.contains("127.0.0.1"), "\(e)")
        }
        #expect(try await untrusting.tracks().isEmpty)
        _ = try await untrusting.call(Daemon.player, "OpenUri", [.string(server.url("/tone.wav"))])
        try await untrusting.waitFor("the untrusted stream reported") { !untrusted.signals.isEmpty }
        let reason = untrusted.signals.first?.arguments
        #expect(reason?[2].stringValue == "org.tonearm.Error.TLSError" && reason?[3].stringValue?.contains("127.0.0.1") == true,
                "\(String(describing: reason))")
        _ = await untrusting.terminate()

        // With the CA as ca-file: the playlist over https queues its entry, which plays to its end.
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nca-file = \"\(pki.caFile.path)\"\n")
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start([], sink: "wavenc ! filesink location=\(out.path)")
        #expect(try await d.tonearm("config").out.contains(pki.caFile.path))
        _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/list.m3u"))])
        try await d.waitForTheEnd("the https file played", after: changes)
        #expect(failed.signals.isEmpty, "\(failed.signals.map(\.arguments))\n\(d.log.suffix(3000))")
        #expect(try await d.tracks().count == 1)
        #expect(try await d.metadata()["xesam:url"]?.stringValue == server.url("/tone.wav"))
        _ = await d.terminate()
        let rendered = try d.rendering(out).mono
        let heard = try #require(AudioCheck.trimmedRange(rendered))
        #expect(abs(heard.count - Int(1.5 * 44100)) < 2205, "rendered \(heard.count) frames of 1.5 s")
        #expect(server.requests.contains { $0.hasPrefix("GET /tone.wav") }, "\(server.requests)")

        // A ca-file that holds no certificate stops the daemon at start with a message naming it.
        let broken = try Daemon()
        try broken.writeConfig("[plugins.streams]\nca-file = \"/etc/hostname\"\n")
        await #expect(throws: (any Error).self) { try await broken.start() }
        #expect(broken.log.contains("ca-file /etc/hostname"), "\(broken.log.suffix(500))")
    }

    @Test func faultsAreNamedErrorsAndNeverHoldTheBus() async throws {
        let files = TemporaryDirectory("tonearm-served")
        let server = try await TestHTTPServer(root: files.url)
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nconnect-timeout = 3\nread-timeout = 2\nreconnect-attempts = 0\n")
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start()
        // A stream is taken at once (the player's request is the first one made): its fault comes as the track's
        // failure, named by the stream's source, and the player goes on.
        func expectError(_ name: String, _ uri: String) async throws {
            _ = try await d.call(Daemon.player, "OpenUri", [.string(uri)])
            try await d.waitFor("\(uri) failed with \(name)") {
                failed.signals.contains { $0.arguments[1].stringValue == uri }
            }
            let signal = failed.signals.first { $0.arguments[1].stringValue == uri }
            #expect(signal?.arguments[2].stringValue == name, "\(uri): \(String(describing: signal))")
            let message = signal?.arguments[3].stringValue ?? ""
            #expect(message.contains(uri) || message.contains("127.0.0.1"), "the message names the URL: \(message)")
        }
        try await expectError("org.tonearm.Error.NotFound", server.url("/404"))
        try await expectError("org.tonearm.Error.HTTPError", server.url("/500"))
        try await expectError("org.tonearm.Error.TooManyRedirects", server.url("/loop"))
        let closedPort = try freeLoopbackPort()
        try await expectError("org.tonearm.Error.ConnectionRefused", "http://127.0.0.1:\(closedPort)/stream")
        try await expectError("org.tonearm.Error.HostNotFound", "http://no-such-host.invalid/stream")
        let missing = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, ["play", server.url("/404")],
                                           environment: d.environment)
        #expect(missing.2 == 1 && missing.1.contains("org.tonearm.Error.NotFound"), "the command line names it too: \(missing)")

        // A server that answers its headers and then sends nothing: the track fails with a reason, and meanwhile
        // every other call is answered at once.
        let opened = Task { try await d.call(Daemon.player, "OpenUri", [.string(server.url("/live-silent"))]) }
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await d.get(Daemon.player, "PlaybackStatus")
        // The server holds its answer for 120 s: a call held behind it would take that long, so a generous bound tells
        // the two apart on any machine (no timing of the daemon's speed here).
        #expect(clock.now - start < .seconds(30), "a call was held behind a slow server")
        _ = try await opened.value
        try await d.waitFor("the stalled stream reported") {
            failed.signals.contains { $0.arguments[1].stringValue == server.url("/live-silent") }
        }
        let reason = failed.signals.first { $0.arguments[1].stringValue == server.url("/live-silent") }
        // Never heard, so not reconnected: Stalled, and the reason says what was wrong.
        #expect(reason?.arguments[2].stringValue == "org.tonearm.Error.Stalled", "\(String(describing: reason))")
        #expect(reason?.arguments[3].stringValue?.contains("no data for") == true, "\(String(describing: reason))")
        _ = await d.terminate()
    }

    @Test func playOfAStreamNeitherHeardNorFailedSaysSoAndLeavesThePlayerTrying() async throws {
        let files = TemporaryDirectory("tonearm-served")
        let server = try await TestHTTPServer(root: files.url)
        let d = try Daemon()
        // The player waits a minute for data: longer than the command line does (made 1 s here, 30 s by default).
        try d.writeConfig("[plugins.streams]\nread-timeout = 60\nreconnect-attempts = 0\n")
        try await d.start()
        let url = server.url("/live-silent")
        var environment = d.environment
        environment["TONEARM_STREAM_WAIT"] = "1"
        let played = try await runProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, ["play", url],
                                          environment: environment)
        #expect(played.2 == 0, "not a failure yet: \(played)")
        #expect(played.1.contains("not heard after 1 s") && played.1.contains("keeps trying"), "\(played)")
        // Still at it: the stream queued and Playing while it waits for data.
        #expect(try await d.status() == "Playing")
        #expect(try await d.metadata()["xesam:url"]?.stringValue == url)
        _ = await d.terminate()
    }

    @Test func aServerThatNeverAnswersIsLeftAndHoldsNoCall() async throws {
        let files = TemporaryDirectory("tonearm-served")
        let server = try await TestHTTPServer(root: files.url)
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nread-timeout = 2\nreconnect-attempts = 0\n")
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start()
        let url = server.url("/slow-headers")
        // Taken before any server answered: the reply does not wait for the network.
        _ = try await d.call(Daemon.player, "OpenUri", [.string(url)])
        #expect(try await d.tracks().count == 1)
        try await d.waitFor("the request at the server") { server.requests.contains { $0.contains("/slow-headers") } }
        // While the player waits for that server, it answers everything else.
        #expect(try await d.status() == "Playing")
        #expect(try await d.get(Daemon.tonearm, "Buffering").int64Value == 0, "nothing came yet")
        try await d.waitFor("the silent server reported") {
            failed.signals.contains { $0.arguments[1].stringValue == url }
        }
        let reason = failed.signals.first { $0.arguments[1].stringValue == url }
        #expect(reason?.arguments[2].stringValue == "org.tonearm.Error.Stalled", "\(String(describing: reason))")
        try await d.waitFor("Stopped: nothing else to play") { try await d.status() == "Stopped" }
        _ = await d.terminate()
    }

    @Test func aStreamThatStallsMidwayIsReconnectedThenLeft() async throws {
        let files = TemporaryDirectory("tonearm-served")
        // 11 s of audio; the server sends the first half of it at twice its pace, then nothing.
        let live = try await Self.constantRateMP3(files.file("live.mp3"), buffers: 480)
        let server = try await TestHTTPServer(root: files.url, liveFile: live)
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nread-timeout = 2\nreconnect-attempts = 1\nreconnect-delay = 0.2\n")
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start(sink: Self.rawSink(d.media.file("stalls.raw").path))
        _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/live-stalls"))])
        try await d.waitFor("heard playing") {
            let status = try await d.status(), position = try await d.position()
            return status == "Playing" && position > 300_000
        }
        try await d.waitFor("the stall noticed and the stream reconnected", timeout: .seconds(60)) { d.log.contains("reconnecting in") }
        try await d.waitFor("lost after the one reconnect allowed", timeout: .seconds(60)) {
            failed.signals.contains { $0.arguments[2].stringValue == "org.tonearm.Error.StreamLost"
                && ($0.arguments[3].stringValue ?? "").contains("gave up after 1 reconnect attempts") }
        }
        try await d.waitFor("stopped, with nothing after it") { try await d.status() == "Stopped" }
        #expect(d.log.components(separatedBy: "reconnecting in").count == 2, "one reconnect, as allowed")
        _ = await d.terminate()
    }

    @Test func aLiveStreamThatDropsIsReconnectedThenLeft() async throws {
        let (files, server) = try await Self.liveServer(buffers: 60)
        defer { withExtendedLifetime(files) {} }
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nreconnect-attempts = 2\nreconnect-delay = 0.2\nreconnect-max-delay = 0.5\n")
        let buffering = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "BufferingChanged"))
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        let seeked = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.player, member: "Seeked"))
        try await d.start()
        _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/live-closes"))])
        try await d.waitFor("playing") { try await d.status() == "Playing" }
        try await d.waitFor("reconnected twice, then given up", timeout: .seconds(60)) { try await d.status() == "Stopped" }
        let gets = server.requests.filter { $0.hasPrefix("GET /live-closes") }
        // The first play, the request for the song playing now beside it, then exactly the two reconnects allowed.
        #expect(gets.count == 4, "\(server.requests)")
        #expect(d.log.contains("reconnecting in"), "the reconnects are logged")
        // Position starts over at each reconnect that plays: a jump the rate does not explain, so Seeked says it.
        #expect(seeked.signals.contains { $0.arguments.first?.int64Value == 0 }, "\(seeked.signals)")
        // An empty buffer when loaded, then again at each of the two reconnects.
        #expect(buffering.signals.filter { $0.arguments[1].int64Value == 0 }.count >= 3, "reconnecting shows as an empty buffer")
        try await d.waitFor("the loss reported") {
            failed.signals.contains { $0.arguments[2].stringValue == "org.tonearm.Error.StreamLost"
                && ($0.arguments[3].stringValue ?? "").contains("gave up after 2 reconnect attempts") }
        }
        _ = await d.terminate()
    }

    @Test func aSlowStreamPausesForBufferingAndResumesByItself() async throws {
        let files = TemporaryDirectory("tonearm-served")
        // 20 s, served at half speed after the first 3 s.
        let live = try await Self.constantRateMP3(files.file("live.mp3"), buffers: 860)
        let server = try await TestHTTPServer(root: files.url, liveFile: live)
        let d = try Daemon()
        let out = d.media.file("slow.raw")
        try await d.start(sink: Self.rawSink(out.path))
        // `status --follow` off a terminal prints a line per change of the buffer too.
        let follower = try ChildProcess(Daemon.binDirectory.appendingPathComponent("tonearm").path, ["status", "--follow"],
                                        environment: d.environment, captureOutput: false, outputFile: d.home.file("follow.txt").path)
        defer { follower.kill() }
        // The follower prints the state as it is once it has subscribed: from then on it misses no change.
        try await d.waitFor("the follower's first line") {
            !((try? String(contentsOf: d.home.file("follow.txt"), encoding: .utf8)) ?? "").isEmpty
        }
        _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/live-slow"))])
        try await d.waitFor("playing from a full buffer") {
            let position = try await d.position(), level = try await d.get(Daemon.tonearm, "Buffering").int64Value
            return position > 500_000 && level == 100
        }
        // The buffer runs dry: playback holds, and PlaybackStatus still says what the user asked for.
        var heldAt: Int64 = 0
        try await d.waitFor("buffering while playing", timeout: .seconds(60)) {
            let level = try await d.get(Daemon.tonearm, "Buffering").int64Value ?? 100
            guard level < 100 else { return false }
            heldAt = try await d.position()
            return try await d.status() == "Playing"
        }
        // While it fills, the position stands still: two reads half a second apart, both inside one buffering spell
        // (a refill at half speed takes seconds, so a level below 100 at both ends means it never resumed between).
        var still: (Int64, Int64)?
        try await d.waitFor("two positions read while buffering", timeout: .seconds(60)) {
            guard (try await d.get(Daemon.tonearm, "Buffering").int64Value ?? 100) < 100 else { return false }
            let before = try await d.position()
            await letTimePass(.milliseconds(500), because: "a position that moved would move in that time")
            let after = try await d.position()
            guard (try await d.get(Daemon.tonearm, "Buffering").int64Value ?? 100) < 100 else { return false }
            still = (before, after)
            return true
        }
        if let (before, after) = still {
            #expect(after - before < 250_000, "the position moved from \(before) to \(after) µs while the buffer filled")
        }
        // It fills again and playback goes on by itself.
        try await d.waitFor("resumed past where it held", timeout: .seconds(60)) {
            let level = try await d.get(Daemon.tonearm, "Buffering").int64Value, position = try await d.position()
            return level == 100 && position > heldAt + 300_000
        }
        #expect(try await d.status() == "Playing")
        try await d.waitFor("the follower showed the buffer") {
            ((try? String(contentsOf: d.home.file("follow.txt"), encoding: .utf8)) ?? "").contains("buffering ")
        }
        _ = await d.terminate()
    }

    @Test func aNetworkPlaylistLargerThanAllowedIsRefused() async throws {
        let files = TemporaryDirectory("tonearm-served")
        try (["#EXTM3U"] + (1...200).map { "http://127.0.0.1:9/stream\($0).mp3" }).joined(separator: "\n")
            .write(to: files.file("big.m3u"), atomically: true, encoding: .utf8)
        let server = try await TestHTTPServer(root: files.url)
        let d = try Daemon()
        try d.writeConfig("[plugins.streams]\nplaylist-max-bytes = 2048\n")
        try await d.start()
        do {
            _ = try await d.call(Daemon.player, "OpenUri", [.string(server.url("/big.m3u"))])
            Issue.record("a playlist over the size bound was taken")
        } catch let e as DBusError {
            #expect(e.name == "org.tonearm.Error.PlaylistTooLarge", "\(e)")
        }
        #expect(try await d.tracks().isEmpty)
        _ = await d.terminate()
    }

    @Test func localPlaylistsQueueTheirEntriesAndSkipTheBadOnes() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 1)
        _ = try d.sine("b.wav", seconds: 1)
        let folder = d.media.url
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("lists"), withIntermediateDirectories: true)
        try "#EXTM3U\n#EXTINF:1,First\n\(a)\n#EXTINF:1,Second\n../b.wav\nmissing.wav\n"
            .write(to: folder.appendingPathComponent("lists/mix.m3u8"), atomically: true, encoding: .utf8)
        try """
            <?xml version="1.0"?><playlist version="1" xmlns="http://xspf.org/ns/0/"><trackList>
            <track><location>b.wav</location></track><track><location>a.wav</location></track></trackList></playlist>
            """.write(to: folder.appendingPathComponent("order.xspf"), atomically: true, encoding: .utf8)
        let failed = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start([folder.appendingPathComponent("lists/mix.m3u8").path])
        try await d.waitFor("the list's two good entries queued") { try await d.tracks().count == 2 }
        try await d.waitFor("the missing entry reported") {
            failed.signals.contains { ($0.arguments[1].stringValue ?? "").hasSuffix("lists/missing.wav") && $0.arguments[2].stringValue == "org.tonearm.Error.NoSuchFile" }
        }
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "a")
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([Daemon.uri(folder.appendingPathComponent("order.xspf").path)]), .bool(false)])
        let titles = try await d.call(Daemon.trackList, "GetTracksMetadata", [.objectPathArray(try await d.tracks())])
        let names = (titles.first?.arrayValue ?? []).compactMap { $0.vardictValue?["xesam:url"]?.stringValue?.split(separator: "/").last.map(String.init) }
        #expect(names == ["b.wav", "a.wav"], "\(names)")
        _ = await d.terminate()
    }
}

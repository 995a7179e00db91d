import Testing
import TonearmCore
import XMLTree
@testable import UPnP

@Suite struct SSDPMessagesTests {
    let messages = SSDPMessages(udn: "uuid:abc", deviceType: UPnPRenderer.deviceType,
                                serviceTypes: ServiceDefinition.all.map(\.type), server: "S")

    @Test func readsSearches() {
        let search = "M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\nMX: 2\r\nST: ssdp:all\r\n\r\n"
        #expect(SSDPMessages.search(search)?.st == "ssdp:all")
        #expect(SSDPMessages.search(search)?.mx == 2)
        #expect(SSDPMessages.search("NOTIFY * HTTP/1.1\r\nNT: x\r\n\r\n") == nil)
        #expect(SSDPMessages.search("M-SEARCH * HTTP/1.1\r\nST: ssdp:all\r\n\r\n") == nil, "no MAN")
        #expect(SSDPMessages.search("\u{0}\u{1}garbage") == nil)
    }

    @Test(arguments: [
        ("ssdp:all", 6), ("upnp:rootdevice", 1), ("uuid:abc", 1), ("urn:schemas-upnp-org:device:MediaRenderer:1", 1),
        ("urn:schemas-upnp-org:service:AVTransport:1", 1), ("urn:schemas-upnp-org:service:ContentDirectory:1", 0),
        ("urn:schemas-upnp-org:device:MediaRenderer:2", 0), ("urn:schemas-upnp-org:device:MediaServer:1", 0), ("uuid:other", 0),
    ])
    func answersWhatIsAsked(_ st: String, _ count: Int) {
        let answers = messages.matching(st)
        #expect(answers.count == count)
        for a in answers where st != "ssdp:all" { #expect(a.nt == st) }
    }

    @Test func writesAnnouncements() {
        let alive = messages.notify(messages.targets[0], location: "http://h:1/d.xml", alive: true)
        #expect(alive.contains("NTS: ssdp:alive\r\n"))
        #expect(alive.contains("LOCATION: http://h:1/d.xml\r\n"))
        #expect(alive.contains("USN: uuid:abc::upnp:rootdevice\r\n"))
        let bye = messages.notify(messages.targets[0], location: "http://h:1/d.xml", alive: false)
        #expect(bye.contains("NTS: ssdp:byebye\r\n") && !bye.contains("LOCATION"))
        let answer = messages.searchAnswer(messages.targets[2], location: "http://h:1/d.xml")
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.contains("ST: urn:schemas-upnp-org:device:MediaRenderer:1\r\n"))
        #expect(answer.hasSuffix("\r\n\r\n"))
    }
}

@Suite struct RendererVariablesTests {
    func state(_ status: PlaybackStatus, tracks: Int = 2, current: Int? = 0, volume: Double = 0.5, loop: LoopStatus = .none,
               shuffle: Bool = false, position: Int64 = 5_000_000) -> PlayerState {
        var s = PlayerSnapshot()
        s.tracks = (0..<tracks).map { i in
            var m = TrackMetadata(url: "http://h/\(i).ogg", title: "T\(i)")
            m.length = 60_000_000
            return Track(id: TrackID(serial: UInt64(i + 1)), metadata: m)
        }
        s.current = current.map { s.tracks[$0] }
        s.status = status
        s.volume = volume
        s.loop = loop
        s.shuffle = shuffle
        s.canSeek = true
        s.canGoNext = true
        return PlayerState(snapshot: s, position: PositionBasis(position: position, rate: 0))
    }

    @Test(arguments: [
        (PlaybackStatus.playing, 2, "PLAYING"), (.paused, 2, "PAUSED_PLAYBACK"), (.stopped, 2, "STOPPED"), (.stopped, 0, "NO_MEDIA_PRESENT"),
    ])
    func transportState(_ status: PlaybackStatus, _ tracks: Int, _ expected: String) {
        let v = RendererVariables(state(status, tracks: tracks, current: tracks > 0 ? 0 : nil), memory: CastMemory())
        #expect(v.transport["TransportState"] == expected)
    }

    @Test(arguments: [
        (LoopStatus.none, false, "NORMAL"), (.none, true, "SHUFFLE"), (.track, false, "REPEAT_ONE"), (.playlist, true, "REPEAT_ALL"),
    ])
    func playMode(_ loop: LoopStatus, _ shuffle: Bool, _ expected: String) {
        #expect(RendererVariables(state(.playing, loop: loop, shuffle: shuffle), memory: CastMemory()).transport["CurrentPlayMode"] == expected)
    }

    @Test func showsTheCastAndTheNext() {
        var memory = CastMemory()
        memory.entries[TrackID(serial: 1)] = .init(uri: "http://h/0.ogg", metadata: "<DIDL-Lite/>", isNext: false)
        memory.entries[TrackID(serial: 2)] = .init(uri: "http://h/1.ogg", metadata: "<n/>", isNext: true)
        var s = state(.playing)
        s.snapshot.nextID = TrackID(serial: 2)
        let v = RendererVariables(s, memory: memory)
        #expect(v.transport["AVTransportURI"] == "http://h/0.ogg")
        #expect(v.transport["AVTransportURIMetaData"] == "<DIDL-Lite/>")
        #expect(v.transport["NextAVTransportURI"] == "http://h/1.ogg")
        #expect(v.transport["CurrentTrack"] == "1")
        #expect(v.transport["NumberOfTracks"] == "2")
        #expect(v.transport["CurrentTrackDuration"] == "0:01:00")
        #expect(v.position == 5_000_000)
        #expect(v.rendering["Volume"] == "50")
        #expect(v.rendering["Mute"] == "0")
    }

    @Test func aLocalFileIsNotNamedOnTheNetwork() {
        var s = state(.playing)
        s.snapshot.tracks[0].metadata.url = "file:///home/me/Music/secret.flac"
        s.snapshot.current = s.snapshot.tracks[0]
        let v = RendererVariables(s, memory: CastMemory())
        #expect(v.transport["CurrentTrackURI"] == "")
        #expect(v.transport["CurrentTrackMetaData"]?.contains("/home/me") == false)
    }

    @Test func lastChangeHoldsOnlyWhatChanged() throws {
        let a = RendererVariables(state(.playing), memory: CastMemory())
        let b = RendererVariables(state(.paused, volume: 0.25), memory: CastMemory())
        let transport = b.changes("AVTransport", since: a)
        #expect(transport["TransportState"] == "PAUSED_PLAYBACK")
        #expect(transport["CurrentTrackURI"] == nil)
        let rendering = b.changes("RenderingControl", since: a)
        #expect(rendering == ["Volume": "25"])
        let doc = try XMLElement.parse(RendererVariables.lastChange("RenderingControl", rendering))
        #expect(doc.find("Volume")?.attributes == ["channel": "Master", "val": "25"])
        #expect(b.changes("ConnectionManager", since: a).isEmpty)
    }
}

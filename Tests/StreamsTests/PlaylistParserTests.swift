import Foundation
import Testing
import TonearmCore
@testable import Streams

/// Playlist formats read without I/O, by tables.
struct PlaylistParserTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var format: PlaylistFormat
        var text: String
        var entries: [PlaylistEntry]
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "plain m3u", format: .m3u, text: "a.ogg\n\nsub/b.mp3\r\n# a comment\n/abs/c.flac\n",
             entries: [.init(location: "a.ogg"), .init(location: "sub/b.mp3"), .init(location: "/abs/c.flac")]),
        Case(name: "extended m3u", format: .m3u,
             text: "#EXTM3U\n#EXTINF:123,Bill Evans - Peace Piece\nhttp://h/a.mp3\n#EXTINF:-1,Radio One\nhttp://r/live\nafter.ogg\n",
             entries: [.init(location: "http://h/a.mp3", title: "Bill Evans - Peace Piece", duration: 123),
                       .init(location: "http://r/live", title: "Radio One"), .init(location: "after.ogg")]),
        Case(name: "m3u8 with attributes", format: .m3u,
             text: "#EXTM3U\n#EXTINF:-1 tvg-id=\"x\" group-title=\"News, talk\",Talk FM\nhttps://t/stream\n",
             entries: [.init(location: "https://t/stream", title: "Talk FM")]),
        Case(name: "pls", format: .pls,
             text: "[playlist]\nNumberOfEntries=2\nFile2=http://b/2\nTitle2=Two\nFile1=http://a/1\nTitle1=One\nLength1=-1\nLength2=60\nVersion=2\n",
             entries: [.init(location: "http://a/1", title: "One"), .init(location: "http://b/2", title: "Two", duration: 60)]),
        Case(name: "pls, keys in any case", format: .pls, text: "[Playlist]\nfile1=x.ogg\n",
             entries: [.init(location: "x.ogg")]),
        Case(name: "xspf", format: .xspf, text: """
            <?xml version="1.0" encoding="UTF-8"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
              <title>Mine</title>
              <trackList>
                <track><location>file:///m/a.ogg</location><title>A &amp; B</title><creator>Trio</creator><duration>61000</duration></track>
                <track><title>no location</title></track>
                <track><location>http://s/x</location><location>http://s/y</location></track>
              </trackList>
            </playlist>
            """,
             entries: [.init(location: "file:///m/a.ogg", title: "Trio - A & B", duration: 61),
                       .init(location: "http://s/x")]),
        Case(name: "xspf with a DOCTYPE, a prefix and CDATA", format: .xspf, text: """
            <?xml version="1.0"?>
            <!DOCTYPE x:playlist SYSTEM "xspf.dtd">
            <x:playlist version="1" xmlns:x="http://xspf.org/ns/0/"><x:trackList>
              <x:track><x:location><![CDATA[http://s/a?b=1&c=2]]></x:location><x:title> Caf&#xE9; </x:title></x:track>
            </x:trackList></x:playlist>
            """,
             entries: [.init(location: "http://s/a?b=1&c=2", title: "Café")]),
    ]

    @Test(arguments: cases)
    func parses(_ c: Case) throws {
        #expect(try PlaylistParser.parse(c.text, format: c.format) == c.entries)
    }

    @Test func refusesBrokenAndOversizedLists() throws {
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse("File1=x\n", format: .pls) }
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse("<playlist><trackList><track>", format: .xspf) }
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse("<html/>", format: .xspf) }
        // An entity declared in the playlist's own DTD is never expanded (nothing outside the file is read).
        #expect(throws: PlaylistError.self) {
            try PlaylistParser.parse("<!DOCTYPE playlist [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><playlist><trackList><track><location>&e;</location></track></trackList></playlist>", format: .xspf)
        }
        let many = (1...11).map { "t\($0).ogg" }.joined(separator: "\n")
        #expect(throws: PlaylistError.self) { try PlaylistParser.parse(many, format: .m3u, maximumEntries: 10) }
        #expect(try PlaylistParser.parse(many, format: .m3u, maximumEntries: 11).count == 11)
    }

    @Test func formatsByNameTypeAndContent() {
        #expect(PlaylistFormat.named(path: "/x/Radio.PLS") == .pls)
        #expect(PlaylistFormat.named(path: "/x/a.m3u8") == .m3u)
        #expect(PlaylistFormat.named(path: "/x/a.xspf") == .xspf)
        #expect(PlaylistFormat.named(path: "/x/a.ogg") == nil)
        #expect(PlaylistFormat.named(path: "/listen", contentType: "audio/x-scpls; charset=utf-8") == .pls)
        #expect(PlaylistFormat.named(path: "/listen", contentType: "audio/mpeg") == nil)
        #expect(PlaylistParser.sniff("\n#EXTM3U\nx") == .m3u)
        #expect(PlaylistParser.sniff("[playlist]\nFile1=x") == .pls)
        #expect(PlaylistParser.sniff("hello") == nil)
        #expect(PlaylistParser.isHLS("#EXTM3U\n#EXT-X-TARGETDURATION:10\nseg1.ts"))
        #expect(!PlaylistParser.isHLS("#EXTM3U\n#EXTINF:10,x\nx.mp3"))
    }

    @Test func textFromBytes() {
        #expect(PlaylistParser.text(Data([0xEF, 0xBB, 0xBF] + Array("é.ogg".utf8))) == "é.ogg")
        #expect(PlaylistParser.text(Data([0x43, 0x61, 0x66, 0xE9])) == "Café") // Windows-1252
    }

    struct Location: Sendable, CustomStringConvertible {
        var entry: String
        var base: String
        var expected: String?
        var description: String { "\(entry) in \(base)" }
    }

    static let locations: [Location] = [
        Location(entry: "b.ogg", base: "file:///m/lists/l.m3u", expected: "file:///m/lists/b.ogg"),
        Location(entry: "../x y.ogg", base: "file:///m/lists/l.m3u", expected: "file:///m/x%20y.ogg"),
        Location(entry: "/abs/c.ogg", base: "file:///m/l.m3u", expected: "file:///abs/c.ogg"),
        Location(entry: "http://h/s", base: "file:///m/l.m3u", expected: "http://h/s"),
        Location(entry: "sub\\w.ogg", base: "file:///m/l.m3u", expected: "file:///m/sub/w.ogg"),
        Location(entry: "song.ogg", base: "http://h:8000/lists/l.m3u", expected: "http://h:8000/lists/song.ogg"),
        Location(entry: "/live", base: "https://h/lists/l.pls", expected: nil), // a local path from the network
        Location(entry: "a b.mp3", base: "http://h/d/l.m3u", expected: "http://h/d/a%20b.mp3"),
        Location(entry: "icy://r/x", base: "http://h/l.pls", expected: "icy://r/x"),
        Location(entry: "file:///etc/passwd", base: "http://h/l.pls", expected: nil),
        Location(entry: "smb://nas/x.ogg", base: "http://h/l.pls", expected: nil),
    ]

    @Test(arguments: locations)
    func resolvesEntries(_ c: Location) throws {
        let result = PlaylistLocations.resolve(c.entry, against: URL(string: c.base)!)
        switch result {
        case .success(let uri): #expect(uri == c.expected)
        case .failure(let error): #expect(c.expected == nil, "\(error)")
        }
    }
}

/// ICY titles, stream URIs and settings.
struct StreamsLogicTests {
    @Test(arguments: [
        ("Bill Evans - Peace Piece", [String](), "Peace Piece", ["Bill Evans"]),
        ("  Just a title ", [], "Just a title", []),
        ("A - B - C", [], "B - C", ["A"]),
        ("Song - Part 2", ["Told Artist"], "Song - Part 2", ["Told Artist"]),
        (" - dangling", [], "- dangling", []),
    ])
    func splitsStreamTitles(_ raw: String, _ artists: [String], _ title: String, _ expected: [String]) {
        let t = StreamTitle(title: raw, artists: artists)
        #expect(t.title == title)
        #expect(t.artists == expected)
    }

    @Test(arguments: [
        ("StreamTitle='Bill Evans - Peace Piece';StreamUrl='';", "Bill Evans - Peace Piece" as String?),
        ("StreamTitle='';", nil),
        ("StreamUrl='x';", nil),
        ("StreamTitle='no end", "no end"),
    ])
    func readsTheStreamTitleOfAnICYBlock(_ text: String, _ expected: String?) {
        // Padded with NULs to a multiple of 16, as servers send it.
        var block = Array(text.utf8)
        block += [UInt8](repeating: 0, count: (16 - block.count % 16) % 16)
        #expect(ICYMetadata.streamTitle(block) == expected)
        #expect(ICYMetadata.streamTitle(Array("StreamTitle='Café';".utf8)) == "Café")
        #expect(ICYMetadata.streamTitle([0x53, 0x74, 0x72, 0x65, 0x61, 0x6D, 0x54, 0x69, 0x74, 0x6C, 0x65, 0x3D, 0x27, 0xE9, 0x27, 0x3B]) == "é",
                "Latin-1 from an older server")
    }

    @Test func mapsIcySchemes() {
        #expect(StreamsSource.transportURL(URL(string: "icy://r:8000/x")!).absoluteString == "http://r:8000/x")
        #expect(StreamsSource.transportURL(URL(string: "icyx://r/x")!).absoluteString == "https://r/x")
        #expect(StreamsSource.transportURL(URL(string: "http://r/x")!).absoluteString == "http://r/x")
        let s = StreamsSource()
        #expect(s.canResolve(URL(string: "HTTPS://r/x")!))
        #expect(!s.canResolve(URL(string: "file:///x.ogg")!))
    }

    @Test func settingsHaveDefaultsAndRefuseBadValues() throws {
        let d = try StreamsSettings(section: [:])
        #expect(d == StreamsSettings())
        let s = try StreamsSettings(section: ["reconnect-attempts": .int(2), "reconnect-delay": .double(0.5), "user-agent": .string("X/1")])
        #expect(s.reconnect == StreamReconnectPolicy(attempts: 2, firstDelay: .milliseconds(500), maximumDelay: .seconds(30)))
        #expect(s.elementSettings["souphttpsrc"]?["user-agent"] == "X/1")
        for bad: [String: ConfigValue] in [["reconnect-attempts": .string("5")], ["connect-timeout": .int(0)],
                                           ["user-agent": .string("")], ["no-such-key": .int(1)], ["playlist-max-entries": .int(0)]] {
            #expect(throws: TonearmError.self) { try StreamsSettings(section: bad) }
        }
    }

    @Test func proxyFromTheEnvironment() {
        #expect(PlainHTTP.proxy(for: "radio.example", environment: [:]) == nil)
        let p = PlainHTTP.proxy(for: "radio.example", environment: ["http_proxy": "http://proxy.lan:3128/"])
        #expect(p?.host == "proxy.lan" && p?.port == 3128)
        #expect(PlainHTTP.proxy(for: "radio.example", environment: ["http_proxy": "proxy.lan:3128", "no_proxy": "localhost,.example"]) == nil)
        #expect(PlainHTTP.proxy(for: "radio.example", environment: ["HTTP_PROXY": "proxy.lan", "no_proxy": "other.org"])?.port == 8080)
    }

    @Test func backoffDoublesUpToItsCap() {
        let p = StreamReconnectPolicy(attempts: 6, firstDelay: .seconds(1), maximumDelay: .seconds(5))
        #expect((1...5).map { p.delay(beforeAttempt: $0) } == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }
}

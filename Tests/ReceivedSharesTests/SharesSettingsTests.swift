import Foundation
import Testing
import TonearmCore
@testable import ReceivedShares

@Suite struct SharesSettingsTests {
    @Test func defaultsAndChoices() throws {
        let music = URL(fileURLWithPath: "/home/u/Music")
        let d = try SharesSettings(section: [:], musicFolder: music)
        #expect(d.inboxes.map(\.path) == ["/home/u/Music/Inbox"])
        #expect(d.received.path == "/home/u/Music/Received")
        #expect(d.rejected.path == "/home/u/Music/Rejected")
        #expect(d.keep == .move && d.onReceive == .play && d.settle == .seconds(2))
        let c = try SharesSettings(section: ["inboxes": .array([.string("~/Downloads/kdeconnect"), .string("/srv/in")]),
                                            "import": .string("copy"), "on-receive": .string("queue-next"),
                                            "settle-seconds": .double(0.25)],
                                   musicFolder: music, environment: ["HOME": "/home/u"])
        #expect(c.inboxes.map(\.path) == ["/home/u/Downloads/kdeconnect", "/srv/in"])
        #expect(c.keep == .copy && c.onReceive == .queueNext && c.settle == .milliseconds(250))
        #expect(throws: TonearmError.self) { try SharesSettings(section: ["on-receive": .string("shout")], musicFolder: music) }
        #expect(throws: TonearmError.self) { try SharesSettings(section: ["inboxes": .string("/x")], musicFolder: music) }
        #expect(throws: TonearmError.self) { try SharesSettings(section: ["received": .string("rel")], musicFolder: music) }
    }

    @Test func partialNames() {
        for name in ["song.mp3.part", "song.flac.crdownload", ".goutputstream-ABC123", "song.ogg~", ".hidden.mp3", "x.TMP", "y.partial"] {
            #expect(PartialNames.isPartial(name), "\(name)")
        }
        for name in ["song.mp3", "part.flac", "tmp.ogg", "Crdownload.wav"] {
            #expect(!PartialNames.isPartial(name), "\(name)")
        }
    }

    @Test func safeNames() {
        #expect(ReceivedShares.safeName("a\u{1}b\nc.mp3") == "a_b_c.mp3")
        #expect(ReceivedShares.safeName(".hidden.mp3") == "_hidden.mp3")
        let long = String(repeating: "é", count: 300) + ".flac"
        let safe = ReceivedShares.safeName(long)
        #expect(safe.utf8.count <= 200 && safe.hasSuffix(".flac"))
        #expect(ReceivedShares.safeName("") == "received")
    }

    @Test func exportModes() throws {
        #expect(try ReceivedShares.exportMode("") == .passthrough)
        #expect(try ReceivedShares.exportMode("passthrough") == .passthrough)
        #expect(try ReceivedShares.exportMode("OGG") == .transcode(.ogg))
        #expect(try ReceivedShares.exportMode("transcode:mp3") == .transcode(.mp3))
        #expect(throws: TonearmError.self) { try ReceivedShares.exportMode("wma") }
    }
}

@testable import MPDProtocol
import Testing

private func text(_ actions: [MPDSession.Action]) -> [String] {
    actions.map {
        switch $0 {
        case .send(let bytes): "send " + String(decoding: bytes, as: UTF8.self)
        case .close: "close"
        case .execute(let lines, let mode): "execute \(mode) " + lines.joined(separator: "|")
        }
    }
}

@Suite struct MPDSessionTests {
    @Test func singleCommandRunsAndQueuesPipelinedLines() {
        var s = MPDSession()
        #expect(text(s.receive("status")) == ["execute single status"])
        #expect(s.isExecuting)
        #expect(text(s.receive("currentsong")) == [])
        #expect(text(s.receive("ping")) == [])
        #expect(text(s.completed(reply: Array("OK\n".utf8), close: false)) == ["send OK\n", "execute single currentsong"])
        #expect(text(s.completed(reply: Array("OK\n".utf8), close: false)) == ["send OK\n", "execute single ping"])
        #expect(text(s.completed(reply: Array("OK\n".utf8), close: false)) == ["send OK\n"])
        #expect(!s.isExecuting)
    }

    @Test(arguments: [("command_list_begin", MPDSession.ListMode.list), ("command_list_ok_begin", .listOK)])
    func commandListsCollectUntilEnd(begin: String, mode: MPDSession.ListMode) {
        var s = MPDSession()
        #expect(text(s.receive(begin)) == [])
        #expect(text(s.receive("play 0")) == [])
        #expect(text(s.receive("idle")) == [])  // inside a list, idle is a command like another (the executor refuses it)
        #expect(text(s.receive("command_list_end")) == ["execute \(mode) play 0|idle"])
    }

    /// Blanks around a line (spaces, tabs, other horizontal white space) do not hide what it is; inside, they stay.
    @Test func blanksAroundALineAreIgnored() {
        var s = MPDSession()
        #expect(text(s.receive(" \tcommand_list_begin  ")) == [])
        #expect(text(s.receive("add \"a  b.ogg\"")) == [])
        #expect(text(s.receive("\u{00A0}command_list_end\t")) == ["execute list add \"a  b.ogg\""])
        _ = s.completed(reply: Array("OK\n".utf8), close: false)
        #expect(text(s.receive("  idle player ")) == [])
        #expect(s.isIdle)
        #expect(text(s.receive("noidle\t")) == ["send OK\n"])
        #expect(MPDSession.trimmed(" \t ") == "")
        #expect(MPDSession.trimmed("status") == "status")
    }

    @Test func listTooLargeDropsTheClient() {
        var s = MPDSession(maximumListBytes: 20)
        _ = s.receive("command_list_begin")
        #expect(text(s.receive("add 1234567890")) == [])
        #expect(text(s.receive("add 1234567890")) == ["close"])
        #expect(s.isClosed)
        #expect(text(s.receive("ping")) == [])
    }

    @Test func idleWaitsThenReportsWhatChanged() {
        var s = MPDSession()
        #expect(text(s.receive("idle player mixer")) == [])
        #expect(s.isIdle)
        #expect(text(s.changed([.playlist])) == [])
        #expect(text(s.changed([.mixer])) == ["send changed: playlist\nchanged: mixer\nOK\n"].map { _ in "send changed: mixer\nOK\n" })
        #expect(!s.isIdle)
        // Events keep while not idle and are reported at the next idle at once; the first report forgot the playlist.
        #expect(text(s.changed([.player])) == [])
        #expect(text(s.receive("idle")) == ["send changed: player\nOK\n"])
    }

    @Test func silenceDropsAClientButNotOneInIdleOrWaitingForItsReply() {
        var ready = MPDSession()
        #expect(text(ready.silent()) == ["close"])
        var listing = MPDSession()
        _ = listing.receive("command_list_begin")
        _ = listing.receive("play 0")
        #expect(text(listing.silent()) == ["close"], "a list never ended")
        var idle = MPDSession()
        _ = idle.receive("idle")
        #expect(text(idle.silent()) == [])
        #expect(idle.isIdle)
        var running = MPDSession()
        _ = running.receive("listallinfo")
        #expect(text(running.silent()) == [])
        #expect(text(running.completed(reply: Array("OK\n".utf8), close: false)) == ["send OK\n"])
        #expect(text(running.silent()) == ["close"])
    }

    @Test func noidleEndsIdleWithOK() {
        var s = MPDSession()
        _ = s.receive("idle")
        #expect(text(s.receive("noidle")) == ["send OK\n"])
        #expect(text(s.receive("noidle")) == [])  // not idle: ignored, as mpd does
    }

    @Test func anythingButNoidleWhileIdleCloses() {
        var s = MPDSession()
        _ = s.receive("idle")
        #expect(text(s.receive("status")) == ["close"])
    }

    @Test func badIdleSubsystemIsRefused() {
        var s = MPDSession()
        #expect(text(s.receive("idle player bogus")) == ["send ACK [2@0] {idle} Unrecognized idle event: bogus\n"])
        #expect(!s.isIdle)
    }

    @Test func lockedSessionRefusesIdle() {
        var s = MPDSession()
        s.locked = true
        #expect(text(s.receive("idle")) == ["send ACK [4@0] {idle} you don't have permission for \"idle\"\n"])
    }

    @Test func idleQueuedBehindACommandStillWaitsAndNoidleAfterItWorks() {
        var s = MPDSession()
        _ = s.receive("status")
        _ = s.receive("idle")
        _ = s.receive("noidle")
        _ = s.receive("ping")
        #expect(text(s.completed(reply: Array("OK\n".utf8), close: false)) == ["send OK\n", "send OK\n", "execute single ping"])
    }

    @Test func closeAndFloodingClose() {
        var s = MPDSession()
        #expect(text(s.receive("close")) == ["close"])
        var t = MPDSession(maximumQueuedLines: 2)
        _ = t.receive("status")
        _ = t.receive("a")
        _ = t.receive("b")
        #expect(text(t.receive("c")) == ["close"])
    }
}

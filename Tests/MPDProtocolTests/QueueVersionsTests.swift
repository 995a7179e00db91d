import MPDProtocol
import Testing
import TonearmCore

@Suite struct QueueVersionsTests {
    let a = TrackID(path: "/org/tonearm/track/1"), b = TrackID(path: "/org/tonearm/track/2"), c = TrackID(path: "/org/tonearm/track/3")

    @Test func versionsFollowEveryChange() {
        var v = QueueVersions()
        #expect(v.version == 1)
        v.update([a, b])
        #expect(v.version == 2)
        #expect(v.changed(since: 1) == [0, 1])
        v.update([a, b])
        #expect(v.version == 2)  // the same order: no change
        v.update([a, c, b])
        #expect(v.version == 3)
        #expect(v.changed(since: 2) == [1, 2])  // c is new, b moved; a stayed
        v.touch(a)
        #expect(v.version == 4)
        #expect(v.changed(since: 3) == [0])
        v.update([c, b])
        #expect(v.changed(since: 4) == [0, 1])  // c and b both moved up
        #expect(v.changed(since: 99) == [0, 1])  // an unknown (future) version: everything
    }
}

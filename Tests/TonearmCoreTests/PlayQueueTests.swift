import TestSupport
import Testing
@testable import TonearmCore


func makeQueue(_ count: Int) -> PlayQueue {
    var q = PlayQueue()
    let tracks = (0..<count).map { q.makeTrack(TrackMetadata(url: "file:///t\($0).wav")) }
    let inserted = q.insert(tracks, at: .end)
    #expect(inserted)
    q.setCurrent(tracks.first?.id)
    return q
}

@Suite struct PlayQueueTests {
    @Test func idsAreStableObjectPathsAndNeverReused() {
        var q = makeQueue(3)
        let ids = q.ids
        #expect(ids.map(\.path) == ["/org/tonearm/track/1", "/org/tonearm/track/2", "/org/tonearm/track/3"])
        q.remove(ids[1])
        let added = q.makeTrack(TrackMetadata(url: "file:///x.wav"))
        #expect(added.id.path == "/org/tonearm/track/4")
    }

    @Test func reorderTakesOnlyAPermutationAndKeepsTheCurrentEntry() {
        var q = makeQueue(4)
        let ids = q.ids
        q.setCurrent(ids[1])
        let taken = q.reorder([ids[3], ids[1], ids[0], ids[2]])
        #expect(taken)
        #expect(q.ids == [ids[3], ids[1], ids[0], ids[2]])
        #expect(q.currentID == ids[1])
        let short = q.reorder([ids[0], ids[1], ids[2]])
        #expect(!short, "one missing")
        let twice = q.reorder([ids[0], ids[0], ids[1], ids[2]])
        #expect(!twice, "one twice")
        #expect(q.ids == [ids[3], ids[1], ids[0], ids[2]], "a refused order changes nothing")
        var big = makeQueue(10_000)
        let reversed = Array(big.ids.reversed())
        let whole = big.reorder(reversed)
        #expect(whole)
        #expect(big.ids == reversed)
    }

    @Test func nextStopsAtTheEndUnlessLoopingThePlaylist() {
        var q = makeQueue(3)
        let ids = q.ids
        #expect(q.next(after: ids[2], automatic: false) == nil)
        q.loop = .playlist
        #expect(q.next(after: ids[2], automatic: false) == ids[0])
        #expect(q.previous(before: ids[0]) == ids[2])
        q.loop = .none
        #expect(q.previous(before: ids[0]) == nil)
    }

    @Test func loopTrackRepeatsOnlyWhenTheTrackEndsByItself() {
        var q = makeQueue(3)
        q.loop = .track
        let ids = q.ids
        #expect(q.next(after: ids[1], automatic: true) == ids[1])
        #expect(q.next(after: ids[1], automatic: false) == ids[2])
        #expect(q.next(after: ids[2], automatic: false) == nil)
    }

    @Test func shufflePlaysEveryTrackOnceBeforeAnyRepeats() {
        var q = makeQueue(20)
        var rng = SeededGenerator(seed: 42)
        q.setShuffle(true, using: &rng)
        q.loop = .playlist
        var played: [TrackID] = [q.currentID!]
        for _ in 0..<59 {
            let next = q.next(after: q.currentID, automatic: true)!
            q.setCurrent(next)
            played.append(next)
        }
        for round in 0..<3 {
            let slice = played[(round * 20)..<(round * 20 + 20)]
            #expect(Set(slice).count == 20, "round \(round) repeated a track")
        }
        #expect(played[0..<20] != played[20..<40], "a new round should be reshuffled")
        #expect(played.first == q.ids.first, "turning shuffle on keeps the current track first")
    }

    @Test func tracksAddedWhileShuffledStillPlayThisRound() {
        var q = makeQueue(5)
        var rng = SeededGenerator(seed: 7)
        q.setShuffle(true, using: &rng)
        let extra = (0..<5).map { q.makeTrack(TrackMetadata(url: "file:///e\($0).wav")) }
        q.insert(extra, at: .end, using: &rng)
        var seen: Set<TrackID> = [q.currentID!]
        var id = q.currentID
        while let n = q.next(after: id, automatic: true) { seen.insert(n); id = n }
        #expect(seen.count == 10)
    }

    @Test func insertAfterCurrentMoveAndRemove() {
        var q = makeQueue(3)
        let ids = q.ids
        q.setCurrent(ids[1])
        let t = q.makeTrack(TrackMetadata(url: "file:///n.wav"))
        q.insert([t], at: .afterCurrent)
        #expect(q.ids == [ids[0], ids[1], t.id, ids[2]])
        let moved = q.move(ids[2], after: nil)
        #expect(moved)
        #expect(q.ids == [ids[2], ids[0], ids[1], t.id])
        let movedAfterUnknown = q.move(ids[0], after: TrackID(path: "/nope"))
        #expect(!movedAfterUnknown)
        let removed = q.remove(ids[1])
        #expect(removed)
        #expect(q.currentID == t.id, "removing the current track makes the following one current")
        let removedAgain = q.remove(ids[1])
        #expect(!removedAgain)
        q.clear()
        #expect(q.isEmpty && q.currentID == nil)
    }
}

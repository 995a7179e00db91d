import Foundation
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

/// The queue's lookups (by id, next, previous), which go through an index, against a scan of its entries, over random
/// edits and a save and load.
@Suite struct PlayQueueIndexTests {
    static func scanNext(_ order: [TrackID], after id: TrackID?, automatic: Bool, loop: LoopStatus) -> TrackID? {
        guard let id, let i = order.firstIndex(of: id) else { return order.first }
        if automatic && loop == .track { return id }
        if i + 1 < order.count { return order[i + 1] }
        return loop == .playlist ? order.first : nil
    }

    static func scanPrevious(_ order: [TrackID], before id: TrackID, loop: LoopStatus) -> TrackID? {
        guard let i = order.firstIndex(of: id) else { return nil }
        if i > 0 { return order[i - 1] }
        return loop == .playlist ? order.last : nil
    }

    func check(_ q: PlayQueue, known: [TrackID], step: Int) {
        let order = q.playOrder
        for id in known {
            let scanned = q.tracks.first { $0.id == id }
            #expect(q.track(id) == scanned, "step \(step): track(\(id))")
            #expect(q.contains(id) == (scanned != nil), "step \(step): contains(\(id))")
            for automatic in [false, true] {
                #expect(q.next(after: id, automatic: automatic) == Self.scanNext(order, after: id, automatic: automatic, loop: q.loop),
                        "step \(step): next(after: \(id), automatic: \(automatic))")
            }
            #expect(q.previous(before: id) == Self.scanPrevious(order, before: id, loop: q.loop), "step \(step): previous(before: \(id))")
        }
        #expect(q.next(after: nil, automatic: false) == order.first)
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func lookupsMatchAScanAfterAnyEdits(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var q = PlayQueue()
        var known: [TrackID] = []
        for step in 0..<300 {
            let ids = q.ids
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1, 2:
                let new = (0..<Int.random(in: 1...4, using: &rng)).map { _ in q.makeTrack(TrackMetadata(url: "file:///\(step).wav")) }
                known += new.map(\.id)
                let position: PlayQueue.Position = switch Int.random(in: 0..<4, using: &rng) {
                case 0: .end
                case 1: .front
                case 2: .afterCurrent
                default: ids.randomElement(using: &rng).map { .after($0) } ?? .end
                }
                q.insert(new, at: position, using: &rng)
            case 3:
                if let id = ids.randomElement(using: &rng) { q.remove(id) }
            case 4:
                if let id = ids.randomElement(using: &rng) { q.move(id, after: Bool.random(using: &rng) ? nil : ids.randomElement(using: &rng)) }
            case 5:
                q.reorder(ids.shuffled(using: &rng))
            case 6:
                q.setCurrent(ids.randomElement(using: &rng))
            case 7:
                q.setShuffle(!q.shuffle, using: &rng)
            case 8:
                q.loop = [LoopStatus.none, .track, .playlist].randomElement(using: &rng)!
            default:
                if Int.random(in: 0..<8, using: &rng) == 0 { q.clear() } else if let id = ids.randomElement(using: &rng) {
                    q.updateMetadata(id, TrackMetadata(url: "file:///changed\(step).wav"))
                }
            }
            check(q, known: known, step: step)
        }
        let loaded = try JSONDecoder().decode(PlayQueue.self, from: JSONEncoder().encode(q))
        #expect(loaded == q)
        check(loaded, known: known, step: -1)
    }
}

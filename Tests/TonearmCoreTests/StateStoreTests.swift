import Foundation
import Logging
import TestSupport
import Testing
@testable import TonearmCore

@Suite struct StateStoreTests {
    @Test func roundTripsTheQueueAndSettings() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(url: dir.file("state/state.json"))
        #expect(try store.load() == nil)
        var state = PersistedState()
        let t = state.queue.makeTrack(TrackMetadata(url: "file:///a.wav", title: "A"))
        state.queue.insert([t], at: .end)
        state.queue.setCurrent(t.id)
        state.queue.loop = .playlist
        state.queue.setShuffle(true)
        state.position = 12_345_678
        state.volume = 0.4
        try store.save(state)
        #expect(try store.load() == state)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.file("state").path)
        #expect(leftovers.sorted() == ["state.json", "state.json.position"], "no temp files are left behind")
    }

    @Test func thePositionRecordMakesItsFolderWhenMissing() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(url: dir.file("gone/state.json"))
        try store.savePosition(1_234, of: TrackID(path: "/org/tonearm/Track/7"))
        #expect(try String(contentsOf: store.positionURL, encoding: .utf8).hasPrefix("/org/tonearm/Track/7 1234 "))
        try store.savePosition(5_678, of: TrackID(path: "/org/tonearm/Track/7"))
        #expect(try String(contentsOf: store.positionURL, encoding: .utf8).hasPrefix("/org/tonearm/Track/7 5678 "))
    }

    @Test func theWriterKeepsTheOrderAndTheNewestOfEach() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(url: dir.file("state.json"))
        let writer = StateWriter(store: store, logger: Logger(label: "test"))
        var state = PersistedState()
        let a = state.queue.makeTrack(TrackMetadata(url: "file:///a.wav"))
        state.queue.insert([a], at: .end)
        state.queue.setCurrent(a.id)
        state.position = 1_000_000
        // A position after a state wins; a state after a position carries its own.
        for step in 0..<200 {
            state.volume = Double(step) / 200
            writer.save(state)
            writer.savePosition(Int64(step) * 1000 + 5, of: a.id)
        }
        writer.flush()
        #expect(try store.load()?.volume == 199.0 / 200)
        #expect(try store.load()?.position == 199_005)
        writer.savePosition(42, of: a.id)
        state.position = 3_000_000
        writer.save(state)
        writer.flush()
        #expect(try store.load()?.position == 3_000_000)
    }

    @Test func thePositionFileAmendsTheStateForItsTrackOnly() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(url: dir.file("state.json"))
        var state = PersistedState()
        let a = state.queue.makeTrack(TrackMetadata(url: "file:///a.wav"))
        let b = state.queue.makeTrack(TrackMetadata(url: "file:///b.wav"))
        state.queue.insert([a, b], at: .end)
        state.queue.setCurrent(a.id)
        state.position = 1_000_000
        try store.save(state)
        let json = try Data(contentsOf: store.url)

        try store.savePosition(7_000_000, of: a.id)
        #expect(try Data(contentsOf: store.url) == json, "the state file itself is not rewritten")
        #expect(try store.load()?.position == 7_000_000)
        try store.savePosition(9_000_000, of: b.id)
        #expect(try store.load()?.position == 1_000_000, "a position for another track than the current one is ignored")
        try Data("garbage".utf8).write(to: store.positionURL)
        #expect(try store.load()?.position == 1_000_000, "an unreadable position file is ignored")

        try Data(repeating: 0x41, count: 1000).write(to: store.positionURL)
        try store.savePosition(7_000_000, of: a.id)
        #expect(try store.load()?.position == 7_000_000, "a longer file is overwritten whole")
        state.position = 2_000_000  // a seek back, saved in full afterwards
        try store.save(state)
        #expect(try store.load()?.position == 2_000_000, "a full save wins over an older position file")
    }

    @Test func aCorruptFileIsKeptAsideNotDeleted() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("state.json")
        try Data("{\"queue\": [tor".utf8).write(to: url)
        let store = StateStore(url: url)
        #expect(throws: TonearmError.self) { try store.load() }
        #expect(FileManager.default.fileExists(atPath: url.path + ".corrupt"))
        #expect(try store.load() == nil)
    }

    @Test func artIsStoredOnceAndNamedByContent() throws {
        let dir = TemporaryDirectory()
        let cache = ArtCache(folder: dir.file("art"))
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 1, 2, 3]
        let a = try cache.store(png)
        let b = try cache.store(png)
        let c = try cache.store([0xFF, 0xD8, 0xFF, 9])
        #expect(a == b)
        #expect(a.pathExtension == "png" && c.pathExtension == "jpg")
        #expect(a != c)
        #expect(try Data(contentsOf: a) == Data(png))
    }
}

import Foundation
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
        #expect(leftovers == ["state.json"], "no temp files are left behind")
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

import Foundation
import Playback
import TestSupport
import Testing

/// The answer to the pipeline's own HTTP request reaches the player: what the streams plugin used to ask the server
/// for in a request of its own, before playing.
@Suite struct ResponseHeadersTests {
    @Test func aLiveStreamsHeadersComeBeforeItIsHeard() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/live.mp3", station: "Header FM")
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        defer { engine.shutdown() }
        let log = EventLog(engine)
        let item = PlaybackItem(uri: icecast.url("/live.mp3"), token: 7, isLive: true)
        engine.load(item)
        #expect(await log.wait(timeout: .seconds(30)) { $0.contains(.started(item)) }, "\(log.events)")
        let events = log.events
        let answer = events.firstIndex { if case .responseHeaders(item, 200, _) = $0 { return true } else { return false } }
        let started = events.firstIndex(of: .started(item))
        #expect(answer != nil && started != nil && answer! < started!, "the answer before the first audio: \(events)")
        guard let answer, case .responseHeaders(_, _, let headers) = events[answer] else { return }
        #expect(headers["icy-name"] == "Header FM", "names lowercased, values as sent: \(headers)")
        #expect(headers["content-type"] == "audio/mpeg")
    }

    @Test func aMissingMountIsAnsweredAndFails() async throws {
        let icecast = try await Icecast()
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        defer { engine.shutdown() }
        let log = EventLog(engine)
        let item = PlaybackItem(uri: icecast.url("/nothing.mp3"), token: 8, isLive: true)
        engine.load(item)
        #expect(await log.wait(timeout: .seconds(30)) { $0.contains { if case .failed(item, _) = $0 { return true } else { return false } } })
        #expect(log.events.contains { if case .responseHeaders(item, 404, _) = $0 { return true } else { return false } }, "\(log.events)")
    }
}

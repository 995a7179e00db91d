import Foundation
import Streams
import Testing
import TonearmCore

/// What the answer to the player's request makes of a stream queued without a request of its own.
@Suite struct StreamResponseTests {
    let source = StreamsSource()

    func queued(_ url: String) async throws -> TrackMetadata {
        try await source.resolve(URL(string: url)!)
    }

    @Test func queuingAStreamAsksNoServer() async throws {
        // Nothing listens on port 9 of loopback: a request would fail; queuing does not make one.
        let m = try await queued("http://127.0.0.1:9/radio.mp3")
        #expect(m.title == "radio" && m.isLive == nil && m.station == nil)
        let icy = try await queued("icy://127.0.0.1:9/")
        #expect(icy.streamURL == "http://127.0.0.1:9/" && icy.title == "127.0.0.1")
        await #expect(throws: TonearmError.self) { try await queued("http:///nohost") }
    }

    @Test func aStationsAnswerNamesItAndSaysLive() async throws {
        let m = try await queued("http://127.0.0.1:9/radio.mp3")
        let answer = StreamResponse(status: 200, headers: ["content-type": "audio/mpeg", "icy-name": "Jazz FM", "icy-genre": "Jazz", "icy-metaint": "16000"])
        let out = source.applying(answer, to: m)
        #expect(out.isLive == true && out.station == "Jazz FM" && out.title == "Jazz FM" && out.genres == ["Jazz"])
        #expect(out.seeksDespiteQuery == nil)
        // A song named already (by the stream's first ICY block) is kept.
        var song = m
        song.title = "Peace Piece"
        #expect(source.applying(answer, to: song).title == "Peace Piece")
    }

    @Test func aFilesAnswerSaysItSeeks() async throws {
        let m = try await queued("http://127.0.0.1:9/tone.wav")
        let out = source.applying(StreamResponse(status: 200, headers: ["content-length": "88244", "accept-ranges": "bytes"]), to: m)
        #expect(out.isLive == false && out.seeksDespiteQuery == true && out.title == "tone")
        let noRanges = source.applying(StreamResponse(status: 200, headers: ["content-length": "88244"]), to: m)
        #expect(noRanges.isLive == false && noRanges.seeksDespiteQuery == nil)
        // No length: a live stream, whatever else it says.
        #expect(source.applying(StreamResponse(status: 200, headers: ["content-type": "audio/ogg"]), to: m).isLive == true)
        // An error answer changes nothing: the failure says it.
        #expect(source.applying(StreamResponse(status: 404, headers: ["content-length": "9"]), to: m) == m)
    }

    @Test func onlyNetworkStreamsAreLookedInto() async throws {
        #expect(source.explainsFailures(of: TrackMetadata(url: "http://127.0.0.1:9/a.mp3")))
        #expect(!source.explainsFailures(of: TrackMetadata(url: "file:///tmp/a.mp3")))
        // A refused connection, named.
        let explained = await source.explainFailure(of: TrackMetadata(url: "http://127.0.0.1:9/a.mp3"))
        guard case .error(let error) = explained else { Issue.record("\(String(describing: explained))"); return }
        #expect(error.reason == .connectionRefused, "\(error)")
    }
}

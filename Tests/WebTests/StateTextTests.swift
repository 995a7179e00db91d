import Foundation
import NIOCore
import Testing
@testable import TonearmCore
@testable import Web

/// `GET /api/v1/state` keeps the state's text between publishes and writes only the position afresh: the text must
/// be what encoding the state whole gives, at any instant and after any publish.
@Suite struct StateTextTests {
    private func playing(_ channel: PlayerChannel, volume: Double, from position: Int64, at instant: ContinuousClock.Instant) {
        var snapshot = PlayerSnapshot()
        snapshot.status = .playing
        snapshot.volume = volume
        let track = Track(id: TrackID(serial: 7), metadata: TrackMetadata(url: "file:///music/caf%C3%A9.ogg", title: "Café \"live\""))
        snapshot.current = track
        snapshot.tracks = [track]
        channel.publish(snapshot: snapshot, position: PositionBasis(position: position, instant: instant, rate: 1, limit: 600_000_000),
                        event: .changed(snapshot))
    }

    private func text(_ buffer: ByteBuffer) -> String { String(buffer: buffer) }

    @Test func theTextIsTheWholeEncodingAtEveryInstantAndAfterEveryPublish() throws {
        let channel = PlayerChannel(), stateText = StateText()
        let start = ContinuousClock.now
        #expect(text(stateText.buffer(of: channel.state, at: start)) == Shapes.state(channel.state, at: start).text)

        playing(channel, volume: 0.5, from: 1_000_000, at: start)
        for later in [0, 250, 1_500, 90_000] {
            let now = start.advanced(by: .milliseconds(later))
            #expect(text(stateText.buffer(of: channel.state, at: now)) == Shapes.state(channel.state, at: now).text)
        }
        let read = try #require(try JSONSerialization.jsonObject(with: Data(text(stateText.buffer(of: channel.state, at: start.advanced(by: .seconds(2))))
            .utf8)) as? [String: Any])
        #expect(read["position"] as? Double == 3)
        #expect(read["volume"] as? Double == 0.5)
        #expect((read["track"] as? [String: Any])?["title"] as? String == "Café \"live\"")

        // A publish with a new snapshot, and one with only a new position basis, are both read at once.
        playing(channel, volume: 0.75, from: 1_000_000, at: start)
        #expect(text(stateText.buffer(of: channel.state, at: start)).contains(#""volume":0.75"#))
        channel.publish(position: PositionBasis(position: 42_000_000, instant: start, rate: 0))
        #expect(text(stateText.buffer(of: channel.state, at: start.advanced(by: .seconds(5)))) == Shapes.state(channel.state, at: start).text)
        #expect(text(stateText.buffer(of: channel.state, at: start)).contains(#""position":42,"#))
    }
}

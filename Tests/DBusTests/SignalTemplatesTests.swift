@testable import DBus
import Testing

@Suite struct SignalTemplatesTests {
    private func key(_ member: String, _ arguments: [DBusValue]) -> SignalTemplates.Key {
        SignalTemplates.Key(path: "/org/mpris/MediaPlayer2", interface: "org.tonearm.Test1", member: member, arguments: arguments)
    }

    private func keep(_ templates: inout SignalTemplates, _ key: SignalTemplates.Key) throws {
        let box = try MessageBox.signal(path: key.path, interface: key.interface, member: key.member, arguments: key.arguments)
        templates.keep(box, for: key)
    }

    @Test func aStatusThatFlipsBackIsACopyEvenAfterManyTicks() throws {
        var templates = SignalTemplates()
        let paused = key("PropertiesChanged", [.string("org.mpris.MediaPlayer2.Player"), .vardict(["PlaybackStatus": .string("Paused")]), .stringArray([])])
        let playing = key("PropertiesChanged", [.string("org.mpris.MediaPlayer2.Player"), .vardict(["PlaybackStatus": .string("Playing")]), .stringArray([])])
        try keep(&templates, paused)
        try keep(&templates, playing)
        let ticks = (0..<40).map { key("Tick", [.objectPath("/t/1"), .int64(Int64($0) * 1_000_000), .int64(60_000_000)]) }
        for tick in ticks { try keep(&templates, tick) }
        let kept = [paused, playing, ticks.last!].map { templates.copy(of: $0) != nil }
        #expect(kept == [true, true, true], "the status both ways and the last tick")
        let firstTick = templates.copy(of: ticks.first!)
        #expect(firstTick == nil, "only the last ticks are kept")
        let stopped = templates.copy(of: key("PropertiesChanged", [.string("org.mpris.MediaPlayer2.Player"),
                                                                 .vardict(["PlaybackStatus": .string("Stopped")]), .stringArray([])]))
        #expect(stopped == nil, "never sent")
    }

    @Test func eachCopyIsAMessageOfItsOwn() throws {
        var templates = SignalTemplates()
        let seeked = key("Seeked", [.int64(5_000_000)])
        try keep(&templates, seeked)
        let copies = [templates.copy(of: seeked), templates.copy(of: seeked)]
        let first = try #require(copies[0])
        let second = try #require(copies[1])
        #expect(first.message != second.message, "each send has a message of its own, which the connection locks and numbers")
        #expect(try Marshal.read(first.message) == [.int64(5_000_000)])
        #expect(try Marshal.read(second.message) == [.int64(5_000_000)])
    }

    @Test func bigSignalsAreNotKept() {
        #expect(SignalTemplates.keeps([.string("a"), .vardict(["PlaybackStatus": .string("Paused")]), .stringArray([])]))
        #expect(!SignalTemplates.keeps([.array(element: "i", (0..<40).map { .int32($0) })]))
    }
}

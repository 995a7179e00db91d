import CGStreamer
import Foundation
@testable import Playback
import Testing

/// The period the sink gets audio in: the rule as a table, then the element in a real pipeline.
@Suite struct AudioPeriodTests {
    typealias Piece = PeriodGathering.Piece
    static let ms: UInt64 = 1_000_000

    /// 44.1 kHz stereo S16: 4 bytes a frame, so a period is 17,640 bytes and 40 ms is 7,056.
    static func gathering() -> PeriodGathering {
        var rule = PeriodGathering()
        rule.format(bytesPerFrame: 4, rate: 44_100)
        return rule
    }

    static func piece(at ms: UInt64, lasting duration: UInt64 = 40, bytes: Int = 7_056,
                      startsRun: Bool = false, isGap: Bool = false) -> Piece {
        Piece(pts: ms * Self.ms, duration: duration * Self.ms, bytes: bytes, startsRun: startsRun, isGap: isGap)
    }

    @Test func contiguousBuffersGoOutOnceTheyFillAPeriod() {
        var rule = Self.gathering()
        #expect(rule.periodBytes == 17_640)
        let actions = [0, 40, 80, 120, 160, 200].map { rule.buffer(Self.piece(at: UInt64($0))) }
        #expect(actions == [.hold, .hold, .holdAndSend, .hold, .hold, .holdAndSend])
        #expect(rule.gathered == 0)
    }

    /// Each row: what is gathered before (40 ms at 0 ms), the next buffer, what happens to it.
    @Test(arguments: [
        ("a DISCONT starts a new run", Self.piece(at: 40, startsRun: true), PeriodGathering.Action.sendGatheredFirst(then: .hold)),
        ("a jump in time", Self.piece(at: 45), .sendGatheredFirst(then: .hold)),
        ("a step back in time", Self.piece(at: 0), .sendGatheredFirst(then: .hold)),
        ("rounding within a millisecond continues", Piece(pts: 40 * ms + 900_000, duration: 40 * ms, bytes: 7_056), .hold),
        ("a gap buffer after sound", Self.piece(at: 40, isGap: true), .sendGatheredFirst(then: .hold)),
        ("no timestamp", Piece(pts: nil, duration: 40 * ms, bytes: 7_056), .sendGatheredFirst(then: .pass)),
        ("no duration", Piece(pts: 40 * ms, duration: nil, bytes: 7_056), .sendGatheredFirst(then: .pass)),
        ("a period's worth in one buffer after a break", Self.piece(at: 500, lasting: 100, bytes: 17_640), .sendGatheredFirst(then: .pass)),
        ("a large buffer that continues joins and fills the period", Self.piece(at: 40, lasting: 100, bytes: 17_640), .holdAndSend),
    ])
    func whatBreaksARun(_ row: (String, Piece, PeriodGathering.Action)) {
        var rule = Self.gathering()
        #expect(rule.buffer(Self.piece(at: 0)) == .hold)
        #expect(rule.buffer(row.1) == row.2, "\(row.0)")
    }

    @Test func eventsSendWhatIsGatheredFirstAndFlushesDropIt() {
        var rule = Self.gathering()
        #expect(rule.event() == false)
        _ = rule.buffer(Self.piece(at: 0))
        #expect(rule.event() == true)
        #expect(rule.gathered == 0)
        _ = rule.buffer(Self.piece(at: 40))
        rule.drop()
        #expect(rule.gathered == 0)
        // After the flush nothing is continued: the next buffer starts afresh wherever it is.
        #expect(rule.buffer(Self.piece(at: 1_000)) == .hold)
    }

    @Test func withoutAFormatEverythingPasses() {
        var rule = PeriodGathering()
        #expect(rule.buffer(Self.piece(at: 0)) == .pass)
        #expect(rule.buffer(Self.piece(at: 40)) == .pass)
        rule.format(bytesPerFrame: 0, rate: 44_100)
        #expect(rule.buffer(Self.piece(at: 80)) == .pass)
    }

    /// 100 buffers of 10 ms through the element reach an appsink as 10 of 100 ms, every byte and timestamp kept.
    @Test func aRealPipelineGetsTenthsOfASecond() throws {
        GStreamer.ensureInitialized()
        var error: UnsafeMutablePointer<GError>?
        let pipeline = try #require(gst_parse_launch(
            "audiotestsrc num-buffers=103 samplesperbuffer=441 ! audio/x-raw,format=S16LE,rate=44100,channels=2"
                + " ! identity name=head ! appsink name=sink sync=false", &error))
        defer { gst_element_set_state(pipeline, GST_STATE_NULL); gst_object_unref(pipeline) }
        let head = try #require(gst_bin_get_by_name(tn_bin(pipeline), "head"))
        let sink = try #require(gst_bin_get_by_name(tn_bin(pipeline), "sink"))
        defer { gst_object_unref(head); gst_object_unref(sink) }
        let period = try AudioPeriod()
        gst_element_unlink(head, sink)
        _ = gst_bin_add(tn_bin(pipeline), period.element)
        #expect(gst_element_link_many_pads(head, period.element, sink))
        gst_element_set_state(pipeline, GST_STATE_PLAYING)

        var buffers: [(pts: UInt64, duration: UInt64, bytes: Int)] = []
        while let sample = gst_app_sink_try_pull_sample(tn_app_sink(sink), 5 * tn_second()) {
            if let buffer = gst_sample_get_buffer(sample) {
                buffers.append((UInt64(buffer.pointee.pts), UInt64(buffer.pointee.duration), Int(gst_buffer_get_size(buffer))))
            }
            gst_sample_unref(sample)
        }
        // 103 × 10 ms: ten full periods, and the last 30 ms sent at the end of the stream.
        let expected: [Int] = Array(repeating: 17_640, count: 10) + [5_292]
        #expect(buffers.map(\.bytes) == expected)
        let total: Int = buffers.map(\.bytes).reduce(0, +)
        #expect(total == 103 * 441 * 4)
        for (a, b) in zip(buffers, buffers.dropFirst()) {
            #expect(a.pts + a.duration == b.pts, "\(a) then \(b)")
        }
        #expect(buffers.first?.pts == 0)
    }
}

/// Links `a` → `b` → `c` by their "src" and "sink" pads.
private func gst_element_link_many_pads(_ a: UnsafeMutablePointer<GstElement>, _ b: UnsafeMutablePointer<GstElement>,
                                        _ c: UnsafeMutablePointer<GstElement>) -> Bool {
    gst_element_link_pads(a, "src", b, "sink") != 0 && gst_element_link_pads(b, "src", c, "sink") != 0
}

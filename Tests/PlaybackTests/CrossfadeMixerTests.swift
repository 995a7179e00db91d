import Foundation
@testable import Playback
import Testing

/// The crossfade's rules as tables: a plain value fed samples and events, no GStreamer.
@Suite struct CrossfadeMixerTests {
    typealias Mixer = CrossfadeMixer<String>

    /// 10 frames a second, mono: small enough to read every sample.
    static let format = MixingFormat(rate: 10, channels: 1)

    /// What came out, flattened: samples as numbers, events by name (a segment with its shift in ns).
    static func flatten(_ outputs: [Mixer.Output]) -> [String] {
        outputs.flatMap { output -> [String] in
            switch output {
            case .audio(let samples, _, _): return samples.map { String(format: "%.3f", $0) }
            case .event(let name, let shift): return [shift == 0 ? name : "\(name)-\(shift)"]
            }
        }
    }

    /// A mixer holding `hold` s, with a first stream started and `count` samples of `value` fed.
    static func playing(hold: Double, count: Int, value: Float = 1, live: Bool = false) -> (Mixer, [Mixer.Output]) {
        var m = Mixer()
        m.holdSeconds = hold
        var out = m.event("start1", .streamStart(StreamPlan(fade: nil, live: live)))
        out += m.event("caps", .caps(format))
        out += m.event("segment1", .segment(rate: 1))
        for i in 0..<count { out += m.audio([value], pts: Int64(i) * 100_000_000) }
        return (m, out)
    }

    @Test("off (no hold): everything passes at once, in order")
    func offPassesThrough() {
        let (m, out) = Self.playing(hold: 0, count: 3)
        #expect(Self.flatten(out) == ["start1", "caps", "segment1", "1.000", "1.000", "1.000"])
        #expect(m.isPassingThrough)
    }

    @Test("off, a stream start goes on at once even before any sample of it (a truncated file may have none)")
    func offNeverWaitsForSamples() {
        var (m, _) = Self.playing(hold: 0, count: 3)
        let out = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 2)))) + m.event("segment2", .segment(rate: 1))
        #expect(Self.flatten(out) == ["start2", "segment2"])
        var (n, _) = Self.playing(hold: 3, count: 30)
        // On, a join to the sample keeps its place in the line: nothing waits for the new stream's samples.
        _ = n.event("start2", .streamStart(.gapless))
        #expect(Self.flatten(n.event("eos", .endOfStream)).suffix(2) == ["start2", "eos"])
    }

    @Test("samples that cannot be mixed (no float format) pass as they are, whatever the hold")
    func unmixableFormatPassesThrough() {
        var m = Mixer()
        m.holdSeconds = 5
        var out = m.event("start", .streamStart(.gapless))
        out += m.event("caps", .caps(nil))
        out += m.audio([0.5], pts: 0)
        #expect(Self.flatten(out) == ["start", "caps", "0.500"])
        #expect(m.isPassingThrough)
    }

    @Test("the line fills at three quarters of what comes in until it holds `hold`, then sends on what comes in")
    func holdFills() {
        var (m, out) = Self.playing(hold: 2, count: 40)
        let sent = Self.flatten(out).filter { $0 == "1.000" }.count
        // 40 in, 20 held (2 s at 10 frames/s).
        #expect(sent == 20)
        out = m.audio([1], pts: 4_000_000_000)
        #expect(Self.flatten(out) == ["1.000"])
    }

    @Test("a fade mixes the old end into the new start along the curve, and moves the new segment back")
    func fadeMixes() {
        var (m, _) = Self.playing(hold: 3, count: 40)
        var out = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.4, curve: .linear))))
        out += m.event("segment2", .segment(rate: 1))
        #expect(out.isEmpty, "held until the new stream's first samples")
        out = m.audio([0, 0, 0, 0, 0, 0], pts: 0)
        out += m.event("eos", .endOfStream)
        let flat = Self.flatten(out)
        // Old audio up to the fade, then the stream start and its segment 0.4 s earlier, then the mix.
        let start = flat.firstIndex(of: "start2")!
        #expect(flat[start...] == ["start2", "segment2-400000000", "0.875", "0.625", "0.375", "0.125", "0.000", "0.000", "eos"])
        #expect(flat[..<start].allSatisfy { $0 == "1.000" })
    }

    @Test("what stays of a track's end keeps its place after that track's own segment")
    func keptAudioStaysAfterItsSegment() {
        var (m, _) = Self.playing(hold: 5, count: 4)
        var out = m.event("start2", .streamStart(.gapless)) + m.event("segment2", .segment(rate: 1))
        for i in 0..<6 { out += m.audio([2], pts: Int64(i) * 100_000_000) }
        out += m.event("start3", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.2, curve: .linear))))
        out += m.event("segment3", .segment(rate: 1))
        out += m.audio([0, 0], pts: 0) + m.event("eos", .endOfStream)
        let flat = Self.flatten(out).filter { $0 != "1.000" }
        #expect(flat == ["start2", "segment2", "2.000", "2.000", "2.000", "2.000", "start3", "segment3-200000000", "1.500", "0.500", "eos"])
    }

    @Test("equal-power gains keep the power of two uncorrelated tracks")
    func equalPowerCurve() {
        for p in stride(from: 0.0, through: 1.0, by: 0.05) {
            let g = FadeCurve.equalPower.gains(at: p)
            #expect(abs(g.out * g.out + g.in * g.in - 1) < 1e-12)
        }
        #expect(FadeCurve.linear.gains(at: 0.25) == (0.75, 0.25))
    }

    @Test("trailing silence is dropped and the fade ends at the last sound")
    func trailingSilenceSkipped() {
        var (m, _) = Self.playing(hold: 4, count: 20)
        for i in 0..<10 { _ = m.audio([0], pts: 2_000_000_000 + Int64(i) * 100_000_000) }
        var out = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.2, curve: .linear))))
        out += m.event("segment2", .segment(rate: 1))
        out += m.audio([0, 0, 0], pts: 0)
        out += m.event("eos", .endOfStream)
        let flat = Self.flatten(out)
        let start = flat.firstIndex(of: "start2")!
        // 1 s of silence + 0.2 s of fade taken out.
        #expect(flat[start...] == ["start2", "segment2-1200000000", "0.750", "0.250", "0.000", "eos"])
        #expect(!flat[..<start].contains("0.000"), "silence was sent")
    }

    @Test("a join planned gapless sends both tracks whole, sample after sample")
    func gaplessJoin() {
        var (m, first) = Self.playing(hold: 3, count: 30)
        var out = m.event("start2", .streamStart(.gapless))
        out += m.event("segment2", .segment(rate: 1))
        out += m.audio([2, 2], pts: 0)
        out += m.event("eos", .endOfStream)
        let flat = Self.flatten(first + out)
        #expect(flat.filter { $0 == "1.000" }.count == 30)
        #expect(flat.suffix(5) == ["start2", "segment2", "2.000", "2.000", "eos"])
    }

    @Test("a live stream next fades in alone; a live stream now holds nothing")
    func liveStreams() {
        var (m, _) = Self.playing(hold: 3, count: 30)
        var out = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.4, curve: .linear), live: true)))
        out += m.event("segment2", .segment(rate: 1))
        out += m.audio([1, 1, 1, 1, 1], pts: 0)
        let flat = Self.flatten(out)
        let start = flat.firstIndex(of: "start2")!
        #expect(flat[start...] == ["start2", "segment2", "0.125", "0.375", "0.625", "0.875", "1.000"], "no segment moved, nothing of the old mixed in")
        #expect(flat[..<start].count == 30, "the old track is sent whole")
        #expect(m.isPassingThrough, "a live stream is not held")
    }

    @Test("the new track ending inside the fade sends the rest of the old one fading out")
    func shortNewTrack() {
        var (m, _) = Self.playing(hold: 3, count: 30)
        var out = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.4, curve: .linear))))
        out += m.audio([0, 0], pts: 0)
        out += m.event("eos", .endOfStream)
        #expect(Self.flatten(out).suffix(5) == ["0.875", "0.625", "0.375", "0.125", "eos"])
    }

    @Test("a flush drops everything held and the timeline is the pipeline's again")
    func flushDrops() {
        var (m, _) = Self.playing(hold: 3, count: 30)
        _ = m.event("start2", .streamStart(StreamPlan(fade: Crossfade(seconds: 0.4))))
        m.flush()
        #expect(!m.holdsStreamStart)
        // What comes after the flush fills the line afresh: nothing of before, and the first sample is held.
        let out = m.event("segment", .segment(rate: 1)) + m.audio([0.5], pts: 0)
        #expect(Self.flatten(out) == ["segment"])
        #expect(Self.flatten(m.event("eos", .endOfStream)) == ["0.500", "eos"])
    }

    @Test("a skip continues the cut track from where it is heard, out of what was sent lately")
    func skipFromHeard() {
        var m = Mixer()
        m.holdSeconds = 1
        _ = m.event("start1", .streamStart(.gapless))
        _ = m.event("caps", .caps(Self.format))
        // Samples 0.00, 0.01, … at 10 frames/s: 20 in, the first 10 sent on, the rest held.
        var sent: [String] = []
        for i in 0..<20 { sent += Self.flatten(m.audio([Float(i) / 100], pts: Int64(i) * 100_000_000)) }
        #expect(sent.contains("0.040") && !sent.contains("0.190"))
        // Heard now: 0.4 s (sample 4), behind what was sent by the queues after the filter.
        m.flush(keepingForSkip: 0.4, heard: 400_000_000, curve: .linear)
        var out = m.event("start2", .streamStart(.gapless))
        out += m.audio([0, 0, 0, 0], pts: 0) + m.event("eos", .endOfStream)
        // 0.04 × 0.875, 0.05 × 0.625, 0.06 × 0.375, 0.07 × 0.125.
        #expect(Self.flatten(out) == ["start2", "0.035", "0.031", "0.022", "0.009", "eos"])
    }

    @Test("a skip keeps what would have been heard next of the cut track, to fade out under the next item")
    func skipFadesOut() {
        var (m, _) = Self.playing(hold: 3, count: 30, value: 1)
        m.flush(keepingForSkip: 0.4, curve: .linear)
        var out = m.event("start2", .streamStart(.gapless))
        out += m.event("segment2", .segment(rate: 1))
        out += m.audio([0, 0, 0, 0, 0, 0], pts: 0)
        out += m.event("eos", .endOfStream)
        #expect(Self.flatten(out) == ["start2", "segment2", "0.875", "0.625", "0.375", "0.125", "0.000", "0.000", "eos"])
        // A stop for another reason forgets it.
        var (n, _) = Self.playing(hold: 3, count: 30)
        n.flush(keepingForSkip: 0.4, curve: .linear)
        n.forgetSkip()
        _ = n.event("start2", .streamStart(.gapless))
        #expect(Self.flatten(n.audio([0], pts: 0) + n.event("eos", .endOfStream)) == ["start2", "0.000", "eos"])
    }

    @Test("audio of the cut stream that comes after the stop does not take the skip's fade-out; the next stream does")
    func lateAudioOfTheCutStreamLeavesTheSkip() {
        var (m, _) = Self.playing(hold: 3, count: 30, value: 1)
        m.flush(keepingForSkip: 0.4, curve: .linear)
        // The streaming thread was inside its chain call when the pipeline stopped.
        var out = m.audio([0.5], pts: 3_000_000_000)
        out += m.event("start2", .streamStart(.gapless))
        out += m.audio([0, 0, 0, 0, 0], pts: 0) + m.event("eos", .endOfStream)
        // (The bridge drops such audio before it reaches the mixer; here it stays ahead of the next stream.)
        #expect(Self.flatten(out) == ["0.500", "start2", "0.875", "0.625", "0.375", "0.125", "0.000", "eos"])
    }
}

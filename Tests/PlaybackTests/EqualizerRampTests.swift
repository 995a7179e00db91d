import Foundation
import Playback
import Testing

/// The equalizer's pure parts: curves, band names, clipping prevention and ramps, without GStreamer.
@Suite("Equalizer curves and ramps")
struct EqualizerRampTests {
    @Test("band names: index, Hz or kHz, nearest band within half an octave", arguments: [
        ("0", 0), ("9", 9), ("29", 0), ("60Hz", 1), ("1k", 5), ("1kHz", 5), ("947", 5), ("2k", 6), ("4khz", 7),
        ("15k", 9), ("16000", 9), ("10", nil), ("20k", 9), ("30k", nil), ("bass", nil), ("-3", nil), ("700", 5), ("10 Hz", nil),
    ] as [(String, Int?)])
    func bandNames(text: String, band: Int?) {
        #expect(EqualizerCurve.band(named: text) == band, "\(text)")
    }

    @Test("gains are clamped to the element's range; clipping prevention lowers the preamp by the largest boost")
    func curves() {
        var curve = EqualizerCurve(bands: [20, -30, 3], preamp: 2)
        #expect(curve.bands == [12, -24, 3, 0, 0, 0, 0, 0, 0, 0])
        #expect(curve.largestBoost == 12)
        #expect(curve.guardedAgainstClipping.preamp == -10)
        curve = EqualizerCurve(bands: Array(repeating: -3, count: 10))
        #expect(curve.guardedAgainstClipping == curve, "cuts alone need no headroom")
        #expect(EqualizerCurve.flat.isFlat)
        // A state file edited by hand: always ten bands, in range.
        let decoded = try? JSONDecoder().decode(EqualizerCurve.self, from: Data(#"{"bands": [40, 1], "preamp": -99}"#.utf8))
        #expect(decoded == EqualizerCurve(bands: [12, 1], preamp: -24))
    }

    @Test("a ramp moves in steps of at most maxStep dB per buffer, over at least `duration`, and lands exactly")
    func ramp() {
        var ramp = EqualizerRamp()
        #expect(ramp.advance(by: 0.02) == nil, "settled: nothing to do")
        var target = EqualizerCurve.flat
        target.setBand(5, 6)
        ramp.retarget(target.values)
        var steps: [[Double]] = []
        while let values = ramp.advance(by: 0.01) { steps.append(values) }
        // 6 dB over 50 ms in 10 ms buffers: 1.2 dB wanted per buffer, held to 0.75.
        #expect(steps.count == 8)
        var previous = EqualizerCurve.flat.values
        for step in steps {
            #expect(zip(step, previous).allSatisfy { abs($0 - $1) <= EqualizerRamp.maxStep + 1e-9 })
            previous = step
        }
        #expect(steps.last == target.values)
        #expect(ramp.isSettled)
        // Small buffers: the time bound rules (5 buffers of 10 ms for 1 dB).
        ramp.retarget(EqualizerCurve(bands: [0, 0, 0, 0, 0, 7]).values)
        var count = 0
        while ramp.advance(by: 0.01) != nil { count += 1 }
        #expect(count == 5)
        // A new target midway starts from where the values are.
        ramp.retarget(EqualizerCurve.flat.values)
        _ = ramp.advance(by: 0.01)
        ramp.retarget(target.values)
        #expect(ramp.current[5] == 6.25)
        ramp.settle(at: EqualizerCurve.flat.values)
        #expect(ramp.isSettled && ramp.current == EqualizerCurve.flat.values)
    }
}

import Foundation
import Playback
import Testing
import TestSupport

/// The graphic equalizer rendered through the real engine to WAV files and measured.
@Suite("Equalizer")
struct EqualizerTests {
    let dir = TemporaryDirectory("tonearm-eq")

    /// A mono tone of `frequency` Hz peaking at `peak`.
    func tone(_ frequency: Double, seconds: Double, peak: Double = 8_000) -> WAV {
        WAV.sine(frequency: frequency, frames: 0..<Int(seconds * 44_100), peak: peak, channels: 1)
    }

    /// RMS level of `samples` in dB (relative to 1 sample unit).
    func level(_ samples: some Collection<Int16>) -> Double {
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(max(1e-12, sum / Double(max(1, samples.count))))
    }

    /// Plays `input` through an engine with `curve` set before the load; returns the rendered mono samples.
    func render(_ input: WAV, curve: EqualizerCurve?, offAgain: Bool = false) async throws -> [Int16] {
        let inputURL = dir.file("in-\(UUID().uuidString).wav"), output = dir.file("out-\(UUID().uuidString).wav")
        try input.write(to: inputURL)
        let engine = try PlaybackEngine(sinkDescription: wavSink(output))
        let log = EventLog(engine)
        engine.setEqualizer(curve)
        if offAgain { engine.setEqualizer(nil) }
        #expect(engine.equalizerInPath == (curve != nil && !offAgain), "stopped: the chain goes in or out at once")
        let a = item(inputURL, 1)
        engine.load(a)
        try await waitUntil("the tone played") { log.events.contains(.finished(a)) }
        engine.shutdown()
        return try WAV.read(output).mono
    }

    @Test("a +6 dB band raises a tone at its centre by 6 dB (±0.5) and leaves tones two octaves away (±0.5)",
          arguments: [(5, 947.0), (2, 119.0), (7, 3770.0)])
    func bandBoost(band: Int, centre: Double) async throws {
        var curve = EqualizerCurve.flat
        curve.setBand(band, 6)
        for (frequency, expected) in [(centre, 6.0), (centre * 4, 0.0), (centre / 4, 0.0)] where frequency > 20 && frequency < 20_000 {
            let input = tone(frequency, seconds: 1)
            let rendered = try await render(input, curve: curve)
            #expect(rendered.count == input.frameCount)
            // Past the filter's settling at the start.
            let steady = 4_410..<input.frameCount
            let gain = level(rendered[steady]) - level(input.samples[steady])
            #expect(abs(gain - expected) <= 0.5, "\(frequency) Hz through band \(band) at +6 dB: \(gain) dB, expected \(expected)")
        }
    }

    @Test("clipping prevention lowers the preamp by the largest boost: the boosted tone stays at its level")
    func clippingPrevention() async throws {
        var curve = EqualizerCurve.flat
        curve.setBand(5, 6)
        let input = tone(947, seconds: 1)
        let rendered = try await render(input, curve: curve.guardedAgainstClipping)
        let steady = 4_410..<input.frameCount
        #expect(abs(level(rendered[steady]) - level(input.samples[steady])) <= 0.5)
    }

    @Test("off is bit-exact: switched on then off before a load, the chain is gone and every sample is the input's")
    func offIsBitExact() async throws {
        var curve = EqualizerCurve.flat
        curve.setBand(3, 9)
        let input = sine(0..<44_100)
        let rendered = try await render(input, curve: curve, offAgain: true)
        #expect(rendered == input.samples, "not rendered exactly")
        // And on, for contrast: the same curve changes the samples.
        let boosted = try await render(input, curve: curve)
        #expect(boosted != input.samples)
    }

    @Test("set while paused: applied once the pipeline plays on")
    func setWhilePaused() async throws {
        let inputURL = dir.file("in.wav"), output = dir.file("out.wav")
        // playsink's queue after the filter holds up to 1 s, already filtered when the pipeline prerolls.
        let input = tone(947, seconds: 4)
        try input.write(to: inputURL)
        let engine = try PlaybackEngine(sinkDescription: wavSink(output))
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        engine.load(a, startPaused: true)
        try await waitUntil("paused") { log.events.states.contains(.paused) }
        var curve = EqualizerCurve.flat
        curve.setBand(5, 6)
        engine.setEqualizer(curve)
        engine.play()
        try await waitUntil("the tone played") { log.events.contains(.finished(a)) }
        engine.shutdown()
        let rendered = try WAV.read(output).mono
        #expect(rendered.count == input.frameCount)
        let tail = (3 * 44_100)..<input.frameCount
        #expect(abs(level(rendered[tail]) - level(input.samples[tail]) - 6) <= 0.5)
    }

    @Test("on, off until the chain is out, and on again while playing: the second time is heard too")
    func onOffOnWhilePlaying() async throws {
        let inputURL = dir.file("in.wav"), output = dir.file("out.wav")
        // Long enough that a test thread held up for many seconds (a loaded machine, every suite at once) still acts
        // while it plays; it is stopped once the last change has been heard.
        let input = tone(947, seconds: 40, peak: 5_000)
        try input.write(to: inputURL)
        let engine = try PlaybackEngine(sinkDescription: "wavenc ! filesink sync=true location=\(output.path)")
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        var up = EqualizerCurve.flat
        up.setBand(5, 6)
        engine.load(a)
        try await waitUntil("playing") { (engine.position ?? 0) > 200_000_000 }
        engine.setEqualizer(up)
        try await waitUntil("the chain put in") { engine.equalizerInPath }
        engine.setEqualizer(nil)
        try await waitUntil("the chain taken out after its ramp to flat") { !engine.equalizerInPath }
        engine.setEqualizer(up)
        try await waitUntil("the change carried out") { engine.equalizerSettled }
        // What the filter did is heard after playsink's queue (about 1 s).
        let rendered = try await heardOutAndStopped(engine, log, a, output)
        #expect(rendered.count > 44_100 && rendered.count <= input.frameCount)
        let tail = (rendered.count - 11_025)..<rendered.count
        let gain = level(rendered[tail]) - level(input.samples[tail])
        #expect(abs(gain - 6) <= 0.5, "the second switch-on: \(gain) dB")
    }

    @Test("switching curves and on/off while playing: no jump above the tone's own steepest step, the WAV stays whole")
    func liveSwitching() async throws {
        let inputURL = dir.file("in.wav"), output = dir.file("out.wav")
        let frequency = 947.0
        // Long enough for a test thread held up for many seconds; stopped once the last change has been heard.
        let input = tone(frequency, seconds: 40, peak: 5_000)
        try input.write(to: inputURL)
        // No audioconvert before wavenc: a format change after the first buffer would break the file. Real time, so
        // the changes land while the tone plays.
        let engine = try PlaybackEngine(sinkDescription: "wavenc ! filesink sync=true location=\(output.path)")
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        var up = EqualizerCurve.flat, down = EqualizerCurve.flat
        up.setBand(5, 9)
        down.setBand(5, -9)
        down.preamp = -3
        engine.load(a)
        try await waitUntil("playing") { (engine.position ?? 0) > 200_000_000 }
        // Each change is carried out to the end (its ramp, or the chain out after off) and then held for 200 ms of
        // audio: waits on the stream, not on the clock.
        for curve in [up, down, nil, up, nil, down] {
            engine.setEqualizer(curve)
            try await waitUntil("the change carried out") { engine.equalizerSettled || log.events.contains(.finished(a)) }
            let now = engine.position ?? 0
            try await waitUntil("200 ms more") { (engine.position ?? 0) >= now + 200_000_000 || log.events.contains(.finished(a)) }
        }
        let rendered = try await heardOutAndStopped(engine, log, a, output)
        #expect(rendered.count > 44_100 && rendered.count <= input.frameCount)
        // No gap on the way (and, below, no splice: it would show as a jump).
        #expect(AudioCheck.longestSilence(rendered.dropFirst(100), threshold: 0) < 3, "a gap")
        let peak = Double(rendered.map { abs(Int($0)) }.max() ?? 0)
        // A gain that changes within a buffer's steps (0.75 dB, 9 %) may steepen the wave by as much; an unramped
        // change of a few dB (a click) goes well past that.
        let limit = Int(Double(WAV.sineStepLimit(frequency: frequency, peak: peak)) * 1.2)
        let jump = AudioCheck.largestJump(rendered)
        #expect(jump <= limit, "a click: a jump of \(jump) above \(limit)")
        let at = zip(rendered, rendered.dropFirst()).enumerated().max { abs(Int($0.1.1) - Int($0.1.0)) < abs(Int($1.1.1) - Int($1.1.0)) }?.offset ?? 0
        print("equalizer live switching: largest jump \(jump) at \(at) (\(rendered[max(0, at - 3)...min(rendered.count - 1, at + 3)])), limit \(limit)")
        // The changes were heard mid-tone: some 50 ms stretch is boosted by about 9 dB and some cut by about 12.
        let windows = stride(from: 0, to: rendered.count - 2_205, by: 2_205).map {
            level(rendered[$0..<($0 + 2_205)]) - level(input.samples[$0..<($0 + 2_205)])
        }
        print("equalizer live switching: levels \(windows.map { Int($0.rounded()) })")
        #expect((windows.max() ?? 0) > 8, "never boosted: \(windows)")
        #expect((windows.min() ?? 0) < -11, "never cut: \(windows)")
        #expect(!engine.equalizerInPath || engine.equalizer != nil)
    }

    /// Lets what the filter last did be heard (1.5 s past playsink's queue), stops, and reads what was rendered.
    func heardOutAndStopped(_ engine: PlaybackEngine, _ log: EventLog, _ a: PlaybackItem, _ output: URL) async throws -> [Int16] {
        let settled = engine.position ?? 0
        try await waitUntil("1.5 s more heard") { (engine.position ?? 0) >= settled + 1_500_000_000 || log.events.contains(.finished(a)) }
        #expect(!log.events.contains(.finished(a)), "the tone ended before the changes did")
        engine.stop()
        try await waitUntil("stopped") { log.events.states.last == .stopped }
        engine.shutdown()
        return try WAV.read(output).mono
    }
}

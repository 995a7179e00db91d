import Foundation
import Playback
import Testing
import TestSupport

/// Crossfades rendered by the real engine to a WAV file, measured from the samples.
@Suite("Crossfade")
struct CrossfadeTests {
    let dir = TemporaryDirectory("tonearm-crossfade")

    /// Renders float mixes to 16 bits without dither, so a join that only converts keeps every sample.
    func exactSink(_ url: URL) -> String {
        "audioconvert dithering=none ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(url.path)"
    }

    /// Plays `first` then `second` (handed over with `fade`) with crossfade set to `seconds`; the rendered samples.
    func render(_ first: URL, _ second: URL, fade: Crossfade?, seconds: Double) async throws -> WAV {
        let output = dir.file("out-\(UUID().uuidString).wav")
        let engine = try PlaybackEngine(sinkDescription: exactSink(output))
        engine.setCrossfade(seconds: seconds)
        let log = EventLog(engine)
        let a = item(first, 1)
        let b = PlaybackItem(uri: second.uri, token: 2, crossfade: fade)
        engine.setNextItemProvider { finishing in finishing == a ? b : nil }
        engine.load(a)
        #expect(await log.waitFor(.finished(b), timeout: .seconds(60)))
        #expect(log.events.started == [a, b])
        engine.shutdown()
        return try WAV.read(output)
    }

    @Test("tracks of different rates and channel counts fade along the equal-power curve, within 0.5 dB")
    func equalPowerAcrossRates() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        // 440 Hz mono at 44.1 kHz, then 660 Hz stereo at 48 kHz.
        try WAV.sine(frequency: 440, frames: 0..<(4 * 44_100), sampleRate: 44_100, peak: 16_000, channels: 1).write(to: aURL)
        try WAV.sine(frequency: 660, frames: 0..<(3 * 48_000), sampleRate: 48_000, peak: 16_000, channels: 2).write(to: bURL)
        let out = try await render(aURL, bURL, fade: Crossfade(seconds: 2), seconds: 2)
        #expect(out.sampleRate == CrossfadeFormat.rate)
        let rate = Double(out.sampleRate)
        // 4 s + 3 s overlapping by 2 s.
        #expect(abs(out.seconds - 5) < 0.01, "length \(out.seconds) s")
        let samples = out.mono.map(Double.init)
        let window = 4_410 // 0.1 s: a whole number of periods of both tones
        func level(_ frequency: Double, at start: Int) -> Double {
            AudioCheck.amplitude(of: frequency, in: samples[start..<(start + window)], sampleRate: rate)
        }
        let referenceA = level(440, at: 44_100), referenceB = level(660, at: Int(4.5 * rate))
        #expect(abs(referenceA - 16_000) < 300 && abs(referenceB - 16_000) < 300, "levels \(referenceA), \(referenceB)")
        var checked = 0
        for start in stride(from: 2 * 44_100, to: 4 * 44_100 - window, by: window) {
            let progress = (Double(start + window / 2) / rate - 2) / 2
            let expected = FadeCurve.equalPower.gains(at: progress)
            let gainA = level(440, at: start) / referenceA, gainB = level(660, at: start) / referenceB
            let power = gainA * gainA + gainB * gainB
            #expect(abs(10 * log10(power)) < 0.5, "power sum at \(progress): \(power)")
            if expected.out > 0.1 {
                #expect(abs(20 * log10(gainA / expected.out)) < 0.5, "out at \(progress): \(gainA) vs \(expected.out)")
            }
            if expected.in > 0.1 {
                #expect(abs(20 * log10(gainB / expected.in)) < 0.5, "in at \(progress): \(gainB) vs \(expected.in)")
            }
            checked += 1
        }
        #expect(checked >= 18)
    }

    @Test("with crossfade on, a join planned gapless (one album) is still exact to the sample")
    func gaplessJoinStaysExact() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        let split = 57_330
        let whole = sine(0..<(split + 48_510))
        try whole.frames(0..<split).write(to: aURL)
        try whole.frames(split..<whole.frameCount).write(to: bURL)
        let out = try await render(aURL, bURL, fade: nil, seconds: 3)
        #expect(out.mono.count == whole.frameCount, "\(out.mono.count - whole.frameCount) samples off")
        #expect(out.mono == whole.samples, "not rendered exactly")
    }

    @Test("a track that ends in silence fades from its last sound: the silence is skipped")
    func trailingSilenceIsSkipped() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav")
        var a = WAV.sine(frequency: 440, frames: 0..<(4 * 44_100), sampleRate: 44_100, peak: 16_000, channels: 1)
        a.samples += [Int16](repeating: 0, count: 66_150) // 1.5 s of silence
        try a.write(to: aURL)
        try WAV.sine(frequency: 660, frames: 0..<(2 * 44_100), sampleRate: 44_100, peak: 16_000, channels: 1).write(to: bURL)
        let out = try await render(aURL, bURL, fade: Crossfade(seconds: 1, curve: .linear), seconds: 1)
        // 4 s of sound + 2 s, overlapping by 1 s; the 1.5 s of silence gone.
        #expect(abs(out.seconds - 5) < 0.01, "length \(out.seconds) s")
        #expect(AudioCheck.longestSilence(out.mono.dropFirst(), threshold: 200) < 100, "a gap")
    }
}

extension CrossfadeTests {
    @Test("crossfade switched on and off while a track plays: it plays on to its end, nothing lost")
    func switchedLive() async throws {
        let input = dir.file("long.wav"), output = dir.file("out.raw")
        let tone = WAV.sine(frequency: 440, frames: 0..<(3 * 44_100), sampleRate: 44_100, peak: 16_000, channels: 2)
        try tone.write(to: input)
        // A fixed format at the end: what the filter negotiates before it is the sink's own business.
        let engine = try PlaybackEngine(sinkDescription: "audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=44100,channels=2 ! filesink sync=true location=\(output.path)")
        let log = EventLog(engine)
        let a = item(input, 1)
        engine.load(a)
        #expect(await log.wait { $0.states.contains(.playing) })
        try await waitUntil("0.5 s played") { (engine.position ?? 0) > 500_000_000 }
        engine.setCrossfade(seconds: 4)
        try await waitUntil("1.5 s played") { (engine.position ?? 0) > 1_500_000_000 }
        engine.setCrossfade(seconds: 0)
        #expect(await log.waitFor(.finished(a), timeout: .seconds(30)))
        engine.shutdown()
        let rendered = WAV(raw: try Data(contentsOf: output), sampleRate: 44_100, channels: 2).mono
        // The whole track, give or take what a renegotiation may cut (a buffer).
        #expect(abs(rendered.count - tone.frameCount) < 4_410, "\(rendered.count) frames of \(tone.frameCount)")
    }
}


extension CrossfadeTests {
    @Test("with crossfade on, a seek as the first track starts plays from there and then fades into the next")
    func seekRightAtTheStart() async throws {
        let aURL = dir.file("a.wav"), bURL = dir.file("b.wav"), output = dir.file("out.raw")
        try WAV.sine(frequency: 440, frames: 0..<(30 * 11_025), sampleRate: 11_025, peak: 16_000, channels: 1).write(to: aURL)
        try WAV.sine(frequency: 660, frames: 0..<(5 * 11_025), sampleRate: 11_025, peak: 16_000, channels: 1).write(to: bURL)
        let engine = try PlaybackEngine(sinkDescription: "audioconvert ! audio/x-raw,format=S16LE,rate=44100,channels=2 ! filesink sync=true location=\(output.path)")
        engine.setCrossfade(seconds: 3)
        let log = EventLog(engine)
        let a = item(aURL, 1)
        let b = PlaybackItem(uri: bURL.uri, token: 2, crossfade: Crossfade(seconds: 3))
        engine.setNextItemProvider { $0 == a ? b : nil }
        engine.load(a)
        #expect(await log.wait { $0.started.count == 1 })
        engine.seek(to: 23_000_000_000)
        #expect(await log.waitFor(.finished(b), timeout: .seconds(60)))
        #expect(log.events.started == [a, b])
        engine.shutdown()
        let rendered = WAV(raw: try Data(contentsOf: output), sampleRate: 44_100, channels: 2).mono
        // What was heard before the seek is a moment at most; then 7 s + 5 s overlapping by 3 s.
        #expect(abs(Double(rendered.count) / 44_100 - 9) < 0.3, "\(Double(rendered.count) / 44_100) s rendered")
    }
}


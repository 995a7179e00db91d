import DBus
import Foundation
import Synchronization
import DaemonHarness
import TestSupport
import Testing

/// What the daemon renders, read back sample by sample.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AudioTests {
    /// Largest sample-to-sample step of a 0.5-amplitude 440 Hz sine at 44.1 kHz is about 1027.
    static let sineSlope = 1100

    @Test func gaplessJoinHasNoGapAndNoJump() async throws {
        let d = try Daemon()
        let whole = WAV.sine(seconds: 2.4)
        let cut = Int(1.3 * 44100) // a sample boundary inside the sine
        let a = d.media.file("first.wav"), b = d.media.file("second.wav")
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[..<(cut * 2)])).write(to: a)
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[(cut * 2)...])).write(to: b)
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([a.path, b.path], sink: "wavenc ! filesink location=\(out.path)")
        try await d.waitForTheEnd("both played, then Stopped", after: changes)
        _ = await d.terminate()

        let rendered = try d.rendering(out).mono
        let audible = try #require(AudioCheck.trimmedRange(rendered))
        let body = Array(rendered[audible])
        #expect(abs(body.count - whole.frameCount) < 441, "rendered \(body.count) frames, expected \(whole.frameCount)")
        #expect(AudioCheck.longestSilence(body, threshold: 0) < 3, "a run of zeros means a gap")
        #expect(AudioCheck.largestJump(body) <= Self.sineSlope, "a jump means a discontinuity at the join")
        // Both tracks were announced as current, in order.
        let titles = changes.named("PropertiesChanged").compactMap { $0.arguments[1].vardictValue?["Metadata"]?.vardictValue?["xesam:title"]?.stringValue }
        #expect(titles.firstIndex(of: "first").map { i in titles[i...].contains("second") } == true, "\(titles)")
    }

    @Test func threeTracksJoinGaplesslyOneAfterTheOther() async throws {
        // Each hand-over must plan the next one: the second track hands over to the third as the first did to it.
        let d = try Daemon()
        let whole = WAV.sine(seconds: 2.4)
        let cuts = [0, Int(0.9 * 44100), Int(1.7 * 44100), whole.frameCount]
        var paths: [String] = []
        for (i, name) in ["one", "two", "three"].enumerated() {
            let file = d.media.file("\(name).wav")
            try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[(cuts[i] * 2)..<(cuts[i + 1] * 2)])).write(to: file)
            paths.append(file.path)
        }
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start(paths, sink: "wavenc ! filesink location=\(out.path)")
        try await d.waitForTheEnd("all three played, then Stopped", after: changes)
        _ = await d.terminate()
        let rendered = try d.rendering(out).mono
        let body = Array(rendered[try #require(AudioCheck.trimmedRange(rendered))])
        #expect(abs(body.count - whole.frameCount) < 441, "rendered \(body.count) frames, expected \(whole.frameCount)")
        #expect(AudioCheck.longestSilence(body, threshold: 0) < 3, "a run of zeros means a gap")
        #expect(AudioCheck.largestJump(body) <= Self.sineSlope, "a jump means a discontinuity at a join")
    }

    @Test func playsWholeWhileItsCodeAndConstantsAreUnmappedAgainAndAgain() async throws {
        // The memory trimmer unmaps the daemon's code pages while the streaming threads run that code: every pass
        // (here at 0, 300, 600… ms; by default every minute) must leave the audio as it was.
        let d = try Daemon()
        d.extraEnvironment["TONEARM_MEMORY_TRIM_INTERVAL"] = "0.05"
        let whole = WAV.sine(seconds: 6)
        let cut = Int(3.3 * 44100)
        let a = d.media.file("first.wav"), b = d.media.file("second.wav")
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[..<(cut * 2)])).write(to: a)
        try WAV(sampleRate: 44100, channels: 2, samples: Array(whole.samples[(cut * 2)...])).write(to: b)
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        // Played at the clock's pace, so that the passes come while it plays.
        try await d.start(["--verbose", a.path, b.path], sink: "wavenc ! filesink sync=true location=\(out.path)")
        try await d.waitForTheEnd("both played, then Stopped", after: changes)
        // Some passes ran while it played, and one handed back at least a MiB.
        let passes = d.log.split(separator: "\n").compactMap { line -> (Int, Int)? in
            guard let r = line.range(of: "resident ") else { return nil }
            let figures = line[r.upperBound...].split(separator: " ").compactMap { Int($0) }
            return figures.count >= 2 ? (figures[0], figures[1]) : nil
        }
        _ = await d.terminate()
        #expect(passes.count >= 3, "\(passes.count) passes")
        #expect(passes.contains { $0.0 - $0.1 >= 1 }, "\(passes)")

        let rendered = try d.rendering(out).mono
        let body = Array(rendered[try #require(AudioCheck.trimmedRange(rendered))])
        #expect(abs(body.count - whole.frameCount) < 441, "rendered \(body.count) frames, expected \(whole.frameCount)")
        #expect(AudioCheck.longestSilence(body, threshold: 0) < 3, "a run of zeros means a gap")
        #expect(AudioCheck.largestJump(body) <= Self.sineSlope, "a jump means a discontinuity")
    }

    @Test func aCorruptFileBetweenGoodOnesIsReportedAndSkipped() async throws {
        let d = try Daemon()
        let a = try d.sine("good1.wav", seconds: 1.0)
        let bad = try d.garbage("broken.wav")
        let b = try d.sine("good2.wav", seconds: 1.0, frequency: 660)
        // Raw samples appended: the pipeline is reset after the failure, which would truncate a WAV.
        let out = d.media.file("rendered.raw")
        let failures = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "TrackFailed"))
        try await d.start([a, bad, b], sink: "audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=44100,channels=2 ! filesink append=true location=\(out.path)")
        try await d.waitFor("the failure is signalled", timeout: .seconds(30)) { failures.named("TrackFailed").count == 1 }
        try await d.waitFor("the good ones played, then Stopped", timeout: .seconds(30)) {
            try await d.status() == "Stopped"
        }
        let failure = failures.named("TrackFailed")[0].arguments
        #expect(failure[1].stringValue == Daemon.uri(bad))
        #expect(failure[2].stringValue?.hasPrefix("org.tonearm.Error.") == true)
        #expect(!(failure[3].stringValue ?? "").isEmpty)
        #expect(d.log.contains("broken.wav"), "the failure is logged")
        _ = await d.terminate()

        let rendered = WAV(raw: try Data(contentsOf: out), sampleRate: 44100, channels: 2).mono
        let audible = try #require(AudioCheck.trimmedRange(rendered))
        // Both good seconds were heard (each about 44100 frames), whether or not a pause sits between them.
        let loud = rendered[audible].filter { abs(Int($0)) > 64 }.count
        #expect(loud > Int(Double(2 * 44100) * 0.9), "only \(loud) audible frames")
    }

    @Test func ticksArriveAtTheIntervalAndStopWhilePaused() async throws {
        let d = try Daemon()
        let a = try d.sine("long.wav", seconds: 60)
        try await d.start([a], tickInterval: 0.2)
        #expect(try await d.get(Daemon.tonearm, "TickInterval") == .int64(200_000))
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let ticks = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.tonearm, member: "Tick"))
        // Playing is promised at once; ticks start when the pipeline really plays (a loaded machine took 7 s to get
        // GStreamer there), so the window opens at the first one.
        try await d.waitFor("the first tick") { !ticks.signals.isEmpty }
        let clock = ContinuousClock()
        let started = clock.now
        await letTimePass(.seconds(2), because: "the window the ticks are counted in")
        let playing = ticks.timed
        // Judged against the time that really passed (a loaded machine sleeps longer than asked), with slack:
        // ticks come, and they do not come in bursts.
        let elapsed = Double((clock.now - started).components.seconds) + Double((clock.now - started).components.attoseconds) / 1e18
        #expect(playing.count >= 3, "\(playing.count) ticks in \(elapsed) s at 0.2 s")
        // Spacing judged by the positions the daemon put in each Tick, not by when the test got them.
        let id = try await d.trackID()
        #expect(playing.allSatisfy { $0.1.arguments.first == .objectPath(id) })
        let positions = playing.compactMap { $0.1.arguments[1].int64Value }
        #expect(positions == positions.sorted(), "positions only grow")
        let gaps = zip(positions, positions.dropFirst()).map { $1 - $0 }.sorted()
        if !gaps.isEmpty { #expect(abs(gaps[gaps.count / 2] - 200_000) < 100_000, "median tick spacing \(gaps[gaps.count / 2]) µs") }
        // No bursts, judged in media time: a stalled daemon's queued ticks can reach the bus after the test's clock
        // started, so their count against the test's wall time says nothing. Any second of playback holds at most
        // 1 / 0.2 ticks, with slack for one tick sent at once after a stall.
        let crowded = positions.indices.map { i in positions[i...].prefix { $0 < positions[i] + 1_000_000 }.count }.max() ?? 0
        #expect(crowded <= 7, "\(crowded) ticks within one second of playback: \(positions)")
        #expect(playing.last?.1.arguments[2] == .int64(60_000_000))

        // Ticks and PlaybackStatus leave the daemon in one ordered stream: a tick sent before the pause comes before
        // Paused is announced; the pause's own tick (where it stopped) and a tick sent while paused after it.
        let ordered = try await SignalRecorder(d.client, DBusMatchRule(sender: Daemon.busName))
        _ = try await d.call(Daemon.player, "Pause")
        try await d.waitFor("Paused announced") { ordered.announced(status: "Paused") }
        let pausedAt = try await d.position()
        await letTimePass(.seconds(1), because: "five tick intervals paused, in which a ticking daemon would have sent ticks")
        // One tick after a seek, even while paused: after Paused and the pause's own tick, and the only other one.
        _ = try await d.call(Daemon.player, "Seek", [.int64(5_000_000)])
        func ticksWhilePaused() -> [DBusSignal] {
            let all = ordered.signals
            let paused = all.firstIndex { $0.arguments.count > 1 && $0.arguments[1].vardictValue?["PlaybackStatus"]?.stringValue == "Paused" }
            return paused.map { all[$0...].filter { $0.member == "Tick" } } ?? []
        }
        try await d.waitFor("tick after seek") {
            ticksWhilePaused().contains { ($0.arguments[1].int64Value ?? 0) >= pausedAt + 4_500_000 }
        }
        let sincePaused = ticksWhilePaused().compactMap { $0.arguments[1].int64Value }
        #expect(sincePaused.count == 2 && sincePaused[0] < pausedAt + 4_500_000 && sincePaused[1] >= pausedAt + 4_500_000,
                "the pause's tick, none while paused, then the seek's: \(sincePaused), paused at \(pausedAt)")

        try await d.set(Daemon.tonearm, "TickInterval", .int64(500_000))
        _ = try await d.call(Daemon.player, "Play")
        ticks.clear()
        let slowStart = clock.now
        await letTimePass(.seconds(2.1), because: "the window the slower ticks are counted in")
        let slower = ticks.signals.compactMap { $0.arguments[1].int64Value }
        // Against the time that really passed, as above: a loaded machine sleeps longer than asked.
        let slowElapsed = Double((clock.now - slowStart).components.seconds) + Double((clock.now - slowStart).components.attoseconds) / 1e18
        #expect(slower.count >= 1, "\(slower.count) ticks in \(slowElapsed) s at 0.5 s")
        // No bursts, in media time as above: any second of playback holds at most 1 / 0.5 ticks, plus slack.
        let slowCrowded = slower.indices.map { i in slower[i...].prefix { $0 < slower[i] + 1_000_000 }.count }.max() ?? 0
        #expect(slowCrowded <= 4, "\(slowCrowded) ticks within one second of playback at 0.5 s: \(slower)")
        let slowerGaps = zip(slower, slower.dropFirst()).map { $1 - $0 }.sorted()
        if !slowerGaps.isEmpty { #expect(abs(slowerGaps[slowerGaps.count / 2] - 500_000) < 150_000, "median spacing \(slowerGaps[slowerGaps.count / 2]) µs") }
    }

    /// A file sink that writes into a FIFO is not opened to be checked before playing: closing it again would end the
    /// stream of a reader that reads until the end once (as `cat` does), which then got nothing of the music.
    @Test func aReaderThatReadsAFIFOOnceGetsTheWholeTrack() async throws {
        let d = try Daemon()
        let song = try d.sine("song.wav", seconds: 1)
        let fifo = d.media.file("audio.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Whatever happens, the writer is never left waiting for a reader once the test is over.
        defer {
            let unblock = open(fifo, O_RDONLY | O_NONBLOCK)
            if unblock >= 0 { close(unblock) }
        }
        let read = FIFORead()
        let reader = Thread {
            let fd = open(fifo, O_RDONLY)
            guard fd >= 0 else { return read.state.withLock { $0.ended = true } }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n > 0 { read.state.withLock { $0.bytes += buffer[0..<n] } } else if n < 0 && errno == EINTR { continue } else { break }
            }
            close(fd)
            read.state.withLock { $0.ended = true }
        }
        reader.start()
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([song], sink: "audioconvert ! audio/x-raw,format=S16LE,rate=44100,channels=2 ! filesink location=\(fifo)")
        try await d.waitForTheEnd("the song played, then Stopped", after: changes)
        _ = await d.terminate()
        #expect(await eventually(timeout: .seconds(30)) { read.state.withLock { $0.ended } }, "the reader's stream never ended")
        let bytes = read.state.withLock { $0.bytes }
        // One second of 16-bit stereo at 44.1 kHz: 176,400 bytes.
        #expect(abs(bytes.count - 176_400) < 17_640, "the reader got \(bytes.count) bytes")
        let samples = stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        #expect(samples.contains { abs(Int($0)) > 1000 }, "the reader got silence")
    }
}

/// What a FIFO's reader thread got, and whether its stream ended.
private final class FIFORead: Sendable {
    let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
}

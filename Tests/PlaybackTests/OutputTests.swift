import Foundation
@testable import Playback
import Synchronization
import Testing
import TestSupport

/// Outputs with real GStreamer: a Snapcast pipe output is a FIFO the test reads itself, standing in for snapserver.
@Suite(.serialized) struct OutputTests {
    let dir = TemporaryDirectory("tonearm-outputs")

    init() {
        // A reader that goes away must make a write fail (EPIPE), not kill the test process; tonearmd does the same.
        signal(SIGPIPE, SIG_IGN)
    }

    static let format = AudioOutput.SampleFormat(rate: 48000, channels: 2)

    func pipeOutput(_ path: String, name: String = "snap") -> AudioOutput {
        AudioOutput(name: name, kind: .snapcastPipe(path: path, format: Self.format))
    }

    func fifo(_ name: String) throws -> String {
        let path = dir.file(name).path
        guard mkfifo(path, 0o600) == 0 else { throw TestFailure("mkfifo \(path): \(String(cString: strerror(errno)))") }
        return path
    }

    /// What snapserver's pipe source does, in the test: holds the FIFO open and drains it.
    final class FIFOReader: Sendable {
        private let fd: Int32
        private let received = Mutex<Data>(Data())
        private let stopAfter: Int?
        private let done = Atomic<Bool>(false)

        /// Reads until `stopAfter` bytes, then closes its end (a server that goes away); nil: until `close`.
        init(_ path: String, stopAfter: Int? = nil) throws {
            fd = open(path, O_RDONLY | O_NONBLOCK)
            guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
            self.stopAfter = stopAfter
            Thread { [self] in self.drain() }.start()
        }

        var data: Data { received.withLock { $0 } }
        var isClosed: Bool { done.load(ordering: .acquiring) }

        func close() { done.store(true, ordering: .releasing) }

        private func drain() {
            var buffer = [UInt8](repeating: 0, count: 16384)
            while !done.load(ordering: .acquiring) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 20) > 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    let total = received.withLock { $0.append(contentsOf: buffer[0..<n]); return $0.count }
                    if let stopAfter, total >= stopAfter { break }
                } else if n == 0 {
                    // No writer any more: poll reports the hang-up at once until one opens the FIFO again, so this is
                    // the stand-in's pace while it waits for one (a reader thread's, not a test waiting for a state).
                    usleep(5000)
                }
            }
            Glibc.close(fd)
            done.store(true, ordering: .releasing)
        }
    }

    @Test func aSinkLineIsTakenWithoutTheBlanksAroundIt() {
        #expect(AudioOutput.sink(" \t\(PlaybackEngine.defaultSink)\n ").kind == .local(device: nil, element: nil))
        #expect(AudioOutput.sink("\n fakesink sync=true \r\n").kind == .pipeline("fakesink sync=true"))
        #expect(AudioOutput.sink(" \n").kind == .pipeline(""))
    }

    @Test func aMissingFIFOIsAnErrorAndNoFileIsCreatedInItsPlace() throws {
        let path = dir.file("missing-fifo").path
        #expect { try PlaybackEngine(sinkDescription: "fakesink").prepareOutput(pipeOutput(path)) } throws: { error in
            let e = error as? PlaybackError
            return e?.domain == OutputConnection.domain && e?.message.contains("does not exist") == true
        }
        #expect(!FileManager.default.fileExists(atPath: path), "filesink would have made a regular file here")
    }

    @Test func aRegularFileWhereTheFIFOShouldBeIsRefusedAndLeftAlone() throws {
        let url = dir.file("not-a-fifo")
        try Data("keep me".utf8).write(to: url)
        #expect { try PlaybackEngine(sinkDescription: "fakesink").prepareOutput(pipeOutput(url.path)) } throws: { error in
            (error as? PlaybackError)?.message.contains("is not a FIFO") == true
        }
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))
    }

    @Test func aFIFONobodyReadsIsAnErrorNotAHang() throws {
        let path = try fifo("unread")
        let started = ContinuousClock.now
        #expect { try PlaybackEngine(sinkDescription: "fakesink").prepareOutput(pipeOutput(path)) } throws: { error in
            (error as? PlaybackError)?.message.contains("nothing reads") == true
        }
        print("a FIFO with no reader was refused in \(ContinuousClock.now - started)")
    }

    @Test func aRefusedPortIsAnError() throws {
        // A port that was free a moment ago: nothing listens there.
        let port = try freeLoopbackPort()
        let output = AudioOutput(name: "tcp", kind: .snapcastTCP(host: "127.0.0.1", port: port, format: Self.format))
        #expect { try PlaybackEngine(sinkDescription: "fakesink").prepareOutput(output) } throws: { error in
            (error as? PlaybackError)?.message.contains("cannot reach the Snapcast server at 127.0.0.1:\(port)") == true
        }
    }

    @Test func aTrackReachesTheFIFOBitExactInSnapcastsFormat() async throws {
        let path = try fifo("snapfifo")
        let input = WAV.sine(seconds: 1, sampleRate: 48000, channels: 2)
        let inputURL = dir.file("in.wav")
        try input.write(to: inputURL)
        let reader = try FIFOReader(path, stopAfter: input.samples.count * 2)
        let engine = try PlaybackEngine(output: pipeOutput(path))
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        engine.load(a)
        #expect(await log.waitFor(.finished(a), timeout: .seconds(30)))
        #expect(await eventually(timeout: .seconds(10)) { reader.isClosed })
        engine.shutdown()
        let got = WAV(raw: reader.data, sampleRate: 48000, channels: 2)
        #expect(got.samples.count == input.samples.count)
        #expect(got.samples == input.samples, "the FIFO carries the track's samples unchanged")
    }

    @Test func whenTheReaderGoesAwayThePlayerHoldsPausedAndAnotherOutputPlaysOn() async throws {
        let path = try fifo("snapfifo")
        let input = WAV.sine(seconds: 3, sampleRate: 48000, channels: 2)
        let inputURL = dir.file("in.wav"), wavURL = dir.file("after.wav")
        try input.write(to: inputURL)
        // Reads half a second, then goes away as a killed snapserver does.
        let reader = try FIFOReader(path, stopAfter: 48000 * 4 / 2)
        let output = pipeOutput(path)
        let engine = try PlaybackEngine(output: output)
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        engine.load(a)
        let lost = await log.wait(timeout: .seconds(30)) { events in
            events.contains { if case .outputFailed(output, _, wasPlaying: true) = $0 { return true }; return false }
        }
        #expect(lost, "the failed write is reported as the output's failure: \(log.events)")
        #expect(reader.isClosed)
        #expect(engine.snapshot.status == .paused)
        #expect(engine.snapshot.item == a)
        #expect(log.events.failures.isEmpty, "the track is not at fault")
        #expect(engine.output == output, "still the output to reconnect")
        #expect(engine.usingNullSink)
        let heldAt = engine.reportedPosition
        #expect(heldAt > 0)
        // The stand-in holds still: paused means the position does not move, however long it stays paused.
        await letTimePass(.milliseconds(300), because: "a playing stand-in would move the position in that time")
        #expect(abs(engine.reportedPosition - heldAt) < 50_000_000)

        let wav = try engine.prepareOutput(AudioOutput(name: "file", kind: .pipeline(wavSink(wavURL))))
        engine.useOutput(wav, paused: false)
        #expect(engine.snapshot.status == .playing)
        #expect(await log.waitFor(.finished(a), timeout: .seconds(30)))
        engine.shutdown()
        #expect(log.events.started == [a], "the same track, never started again")
        let rest = try WAV.read(wavURL)
        let expected = Double(input.frameCount) / 48000 - Double(heldAt) / 1e9
        #expect(abs(rest.seconds - expected) < 0.1, "the rest of the track from where it was held: \(rest.seconds) s, expected \(expected) s")
        #expect(AudioCheck.longestSilence(rest.mono) < 480, "no silence in what was played after the switch")
    }

    @Test func switchingWhilePlayingKeepsTheTrackAndPosition() async throws {
        let input = WAV.sine(seconds: 4, sampleRate: 48000, channels: 2)
        let inputURL = dir.file("in.wav")
        try input.write(to: inputURL)
        let engine = try PlaybackEngine(sinkDescription: "fakesink sync=true")
        let log = EventLog(engine)
        let a = item(inputURL, 1)
        engine.load(a)
        #expect(await eventually(timeout: .seconds(30)) { (engine.position ?? 0) > 1_000_000_000 })
        let wavURL = dir.file("second.wav")
        let second = try engine.prepareOutput(AudioOutput(name: "second", kind: .pipeline(wavSink(wavURL))))
        let before = engine.reportedPosition
        engine.useOutput(second, paused: nil)
        #expect(engine.snapshot.status == .playing)
        #expect(engine.reportedPosition >= before, "Position reads where it was while the item re-opens")
        #expect(engine.output.name == "second")
        #expect(await log.waitFor(.finished(a), timeout: .seconds(30)))
        engine.shutdown()
        #expect(log.events.started == [a])
        let rest = try WAV.read(wavURL)
        let expected = 4 - Double(before) / 1e9
        #expect(rest.seconds <= expected + 0.1 && rest.seconds >= expected - 0.5, "\(rest.seconds) s after the switch, expected about \(expected) s")
    }
}

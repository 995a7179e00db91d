import Foundation
import Playback
import Synchronization
import Testing
import TestSupport

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The test signal: one continuous mono 440 Hz sine at 44.1 kHz peaking at 16 000; `frames` picks a stretch of
/// it, so pieces cut from one signal join exactly.
func sine(_ frames: Range<Int>) -> WAV { WAV.sine(frames: frames, peak: sinePeak, channels: 1) }
let sinePeak = 16_000.0
/// The largest step between neighbouring samples of the test signal; a gap or a splice makes a larger one.
let sineStep = WAV.sineStepLimit(peak: sinePeak)

/// A sink description that renders 16-bit mono-preserving PCM to a WAV file, as fast as it can.
func wavSink(_ url: URL) -> String {
    "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(url.path)"
}

func runGst(_ arguments: [String]) async throws {
    guard try await gstLaunch(["-q"] + arguments).status == 0 else { throw TestFailure("gst-launch-1.0 \(arguments.joined(separator: " ")) failed") }
}

/// Collects an engine's events and waits for conditions on them.
final class EventLog: Sendable {
    private let storage = Mutex<[PlaybackEvent]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ engine: PlaybackEngine) {
        let stream = engine.reports
        // Holds the log until the engine finishes its stream (shutdown).
        let t = Task { [self] in
            for await report in stream { self.storage.withLock { $0.append(report.event) } }
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    var events: [PlaybackEvent] { storage.withLock { $0 } }

    /// Waits until `condition` holds for the events so far; returns whether it did in time.
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: ([PlaybackEvent]) -> Bool) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(10)) { condition(events) }
    }

    func waitFor(_ event: PlaybackEvent, timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { $0.contains(event) }
    }

    func count(_ event: PlaybackEvent) -> Int { events.filter { $0 == event }.count }
}

extension URL {
    var uri: String { absoluteString }
}

func item(_ url: URL, _ token: UInt64) -> PlaybackItem { PlaybackItem(uri: url.uri, token: token) }

extension Array where Element == PlaybackEvent {
    var failures: [(PlaybackItem, PlaybackError)] {
        compactMap { if case .failed(let i, let e) = $0 { return (i, e) } else { return nil } }
    }
    var states: [PlaybackState] {
        compactMap { if case .stateChanged(let s) = $0 { return s } else { return nil } }
    }
    var started: [PlaybackItem] {
        compactMap { if case .started(let i) = $0 { return i } else { return nil } }
    }
}

/// Noise that is the same in every run (SplitMix64 from a fixed seed): about one random file in a hundred is taken
/// for text by typefind, which fails differently, so a test that names the error cannot use fresh noise.
func seededNoise(count: Int, seed: UInt64) -> Data {
    var state = seed
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        withUnsafeBytes(of: z.littleEndian) { bytes += $0 }
    }
    return Data(bytes.prefix(count))
}

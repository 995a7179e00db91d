import Foundation
import Playback
import Synchronization
import Testing
import TestSupport

/// Mono 16-bit PCM WAV files, written and read exactly.
enum Wav {
    static func write(_ samples: [Int16], rate: Int = 44_100, to url: URL) throws {
        var data = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        let dataSize = UInt32(samples.count * 2)
        data.append(contentsOf: Array("RIFF".utf8)); u32(36 + dataSize); data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(1); u32(UInt32(rate)); u32(UInt32(rate * 2)); u16(2); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(dataSize)
        samples.withUnsafeBufferPointer { buffer in
            for s in buffer { withUnsafeBytes(of: s.littleEndian) { data.append(contentsOf: $0) } }
        }
        try data.write(to: url)
    }

    struct Audio {
        var rate: Int
        var channels: Int
        /// First channel only, as Int16.
        var samples: [Int16]
        var seconds: Double { Double(samples.count) / Double(rate) }
    }

    /// Reads a 16-bit PCM WAV; tolerates a header whose sizes were never finalised.
    static func read(_ url: URL, _ label: String = "", line: Int = #line) throws -> Audio {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 }
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        guard bytes.count >= 12, String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else {
            throw TestFailure("not a WAV file (read at line \(line)): \(url.path) (\(bytes.count) bytes)")
        }
        var offset = 12, rate = 0, channels = 1, bits = 16
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            var size = u32(offset + 4)
            if id == "fmt " {
                channels = u16(offset + 10); rate = u32(offset + 12); bits = u16(offset + 22)
            } else if id == "data" {
                let start = offset + 8
                if size == 0 || size == 0xFFFF_FFFF || start + size > bytes.count { size = bytes.count - start }
                guard bits == 16 else { throw TestFailure("expected 16-bit PCM, got \(bits) bits") }
                let frames = size / (2 * channels)
                var samples = [Int16](repeating: 0, count: frames)
                for i in 0..<frames {
                    let o = start + i * 2 * channels
                    samples[i] = Int16(bitPattern: UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8)
                }
                return Audio(rate: rate, channels: channels, samples: samples)
            }
            offset += 8 + size + (size & 1)
        }
        throw TestFailure("no data chunk in \(url.path)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// One continuous sine; `range` picks samples out of it so pieces join exactly.
func sine(frequency: Double = 440, amplitude: Double = 16_000, rate: Int = 44_100, range: Range<Int>) -> [Int16] {
    range.map { i in Int16((amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(rate))).rounded()) }
}

/// A fresh temporary folder per test.
func makeTempDir(_ name: String = #function) throws -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-playback-\(safe)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A sink description that renders 16-bit mono-preserving PCM to a WAV file, as fast as it can.
func wavSink(_ url: URL) -> String {
    "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(url.path)"
}

func runGst(_ arguments: [String]) async throws {
    guard try await runProcess("/usr/bin/gst-launch-1.0", ["-q"] + arguments).status == 0 else { throw TestFailure("gst-launch-1.0 \(arguments.joined(separator: " ")) failed") }
}

/// Collects an engine's events and waits for conditions on them.
final class EventLog: Sendable {
    private let storage = Mutex<[PlaybackEvent]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ engine: PlaybackEngine) {
        let stream = engine.events
        // Holds the log until the engine finishes its stream (shutdown).
        let t = Task { [self] in
            for await event in stream { self.storage.withLock { $0.append(event) } }
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    var events: [PlaybackEvent] { storage.withLock { $0 } }

    /// Waits until `condition` holds for the events so far; returns whether it did in time.
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: ([PlaybackEvent]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if condition(events) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(events)
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

/// Largest sample-to-sample step of a sine with this amplitude and frequency.
func maxSlope(frequency: Double = 440, amplitude: Double = 16_000, rate: Int = 44_100) -> Int {
    Int((amplitude * 2 * Double.pi * frequency / Double(rate)).rounded(.up)) + 2
}

/// Checks for a gap (two or more near-silent samples in a row) or a jump (a step steeper than the sine allows).
func continuityProblems(_ samples: [Int16], slope: Int) -> [String] {
    var problems: [String] = []
    var quietRun = 0
    for i in 1..<samples.count {
        let delta = abs(Int(samples[i]) - Int(samples[i - 1]))
        if delta > slope { problems.append("jump of \(delta) at sample \(i)") }
        if abs(Int(samples[i])) < 100 { quietRun += 1 } else { quietRun = 0 }
        if quietRun == 2 { problems.append("gap at sample \(i - 1)") }
        if problems.count > 5 { break }
    }
    return problems
}

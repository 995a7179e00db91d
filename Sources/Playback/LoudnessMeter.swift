internal import CEBUR128
import CGStreamer
import Foundation
import Synchronization

/// One file's (or an album's) loudness as EBU R128 measures it.
public struct LoudnessResult: Sendable, Equatable, Codable {
    /// Integrated loudness in LUFS; nil when the audio is silent (below the −70 LUFS gate).
    public var loudness: Double?
    /// The highest sample (or true peak) as a linear value, 1 = full scale.
    public var peak: Double
    /// Seconds of audio measured.
    public var seconds: Double

    public init(loudness: Double?, peak: Double, seconds: Double) {
        self.loudness = loudness
        self.peak = peak
        self.seconds = seconds
    }
}

/// Measures loudness with libebur128 on PCM decoded by GStreamer (any format playbin plays), as fast as the
/// decoder goes. Blocking: run it off the cooperative pool.
public enum LoudnessMeter {
    /// What the measurement of a group of files (an album) gives: each file's result or why it failed, and the album
    /// (all files that measured, as one programme: `ebur128_loudness_global_multiple`, the highest peak).
    public struct Group: Sendable {
        public var tracks: [Result<LoudnessResult, PlaybackError>]
        public var album: LoudnessResult?

        public init(tracks: [Result<LoudnessResult, PlaybackError>], album: LoudnessResult?) {
            self.tracks = tracks
            self.album = album
        }
    }

    /// Measures `uris` one after another. `paused` is asked about every 50 ms: while it is true the decoder is held
    /// in PAUSED; `cancelled` ends the measurement (the file under way fails). Each file may take `timeout` of
    /// decoding time.
    public static func measure(uris: [String], truePeak: Bool = false, timeout: Duration = .seconds(600),
                               paused: () -> Bool = { false }, cancelled: () -> Bool = { false }) -> Group {
        GStreamer.ensureInitialized()
        var results: [Result<LoudnessResult, PlaybackError>] = []
        var meters: [Accumulator] = []
        for uri in uris {
            let meter = Accumulator(truePeak: truePeak)
            do {
                try decode(uri, into: meter, timeout: timeout, paused: paused, cancelled: cancelled)
                guard let result = meter.result() else {
                    throw PlaybackError(domain: "stream", code: 0, message: "no audio was decoded", debug: uri)
                }
                results.append(.success(result))
                meters.append(meter)
            } catch let error as PlaybackError {
                results.append(.failure(error))
            } catch {
                results.append(.failure(PlaybackError(domain: "core", code: 0, message: "\(error)", debug: uri)))
            }
        }
        return Group(tracks: results, album: Accumulator.album(meters))
    }

    private static func decode(_ uri: String, into meter: Accumulator, timeout: Duration, paused: () -> Bool,
                               cancelled: () -> Bool) throws {
        let decoder = try DecodePipeline(uri: uri, caps: "audio/x-raw,format=F32LE,layout=interleaved", sink: "fakesink name=sink sync=false")
        var probe: (pad: UnsafeMutablePointer<GstPad>, id: gulong)?
        if let sink = decoder.sink() {
            if let pad = gst_element_get_static_pad(sink, "sink") {
                let callback: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?) -> GstPadProbeReturn = { pad, info, data in
                    guard let pad, let info, let data, let buffer = info.pointee.data?.assumingMemoryBound(to: GstBuffer.self) else {
                        return GST_PAD_PROBE_OK
                    }
                    Unmanaged<Accumulator>.fromOpaque(data).takeUnretainedValue().add(buffer, pad: pad)
                    return GST_PAD_PROBE_OK
                }
                let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, callback, Unmanaged.passUnretained(meter).toOpaque(), nil)
                probe = (pad, id)
            }
            gst_object_unref(sink)
        }
        defer {
            if let probe {
                gst_pad_remove_probe(probe.pad, probe.id)
                gst_object_unref(probe.pad)
            }
        }
        var holding = paused()
        decoder.set(holding ? GST_STATE_PAUSED : GST_STATE_PLAYING)
        // Decoding time only: time held paused does not count against the timeout.
        var budget = timeout
        var last = ContinuousClock.now
        while true {
            if cancelled() { throw PlaybackError(domain: "core", code: 0, message: "the measurement was cancelled", debug: uri) }
            if try decoder.waitForEnd(timeout: 50 * tn_msecond()) { return }
            let now = ContinuousClock.now
            if !holding { budget -= now - last }
            last = now
            if budget <= .zero { throw PlaybackError(domain: "core", code: 0, message: "decoding took longer than \(timeout)", debug: uri) }
            let hold = paused()
            if hold != holding {
                holding = hold
                decoder.set(hold ? GST_STATE_PAUSED : GST_STATE_PLAYING)
            }
        }
    }
}

/// One file's libebur128 state, fed on the decoder's streaming thread.
private final class Accumulator: Sendable {
    private struct State {
        var meter: UnsafeMutablePointer<ebur128_state>?
        var channels: UInt32 = 0
        var rate: UInt = 0
        var frames = 0
    }
    private let state = Mutex(State())
    private let mode: Int32

    init(truePeak: Bool) {
        // Not EBUR128_MODE_HISTOGRAM: its 0.075 dB bins moved results by up to 0.05 LU from loudgain's; the block
        // list costs 8 bytes per 100 ms (about 300 KB for an hour).
        mode = Int32(EBUR128_MODE_I.rawValue | (truePeak ? EBUR128_MODE_TRUE_PEAK.rawValue : EBUR128_MODE_SAMPLE_PEAK.rawValue))
    }

    deinit {
        state.withLock { s in if s.meter != nil { ebur128_destroy(&s.meter) } }
    }

    /// On the streaming thread: a buffer of interleaved F32 samples.
    func add(_ buffer: UnsafeMutablePointer<GstBuffer>, pad: UnsafeMutablePointer<GstPad>) {
        guard let caps = gst_pad_get_current_caps(pad) else { return }
        var info = GstAudioInfo()
        let parsed = gst_audio_info_from_caps(&info, caps) != 0
        gst_caps_unref(caps)
        guard parsed, info.channels > 0, info.rate > 0 else { return }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return }
        defer { gst_buffer_unmap(buffer, &map) }
        let channels = UInt32(info.channels), rate = UInt(info.rate)
        let frames = Int(map.size) / (4 * Int(channels))
        guard let mapped = map.data, frames > 0 else { return }
        // The buffer stays mapped until this function returns; the lock only orders access to the meter. (Passed as
        // an address: a pointer into the caller's buffer cannot enter the lock's region otherwise.)
        let address = UInt(bitPattern: mapped)
        state.withLock { s in
            if s.meter == nil {
                s.meter = ebur128_init(channels, rate, mode)
            } else if s.channels != channels || s.rate != rate {
                _ = ebur128_change_parameters(s.meter, channels, rate)
            }
            guard let meter = s.meter else { return }
            s.channels = channels
            s.rate = rate
            _ = ebur128_add_frames_float(meter, UnsafePointer<Float>(bitPattern: address), frames)
            s.frames += frames
        }
    }

    func result() -> LoudnessResult? {
        state.withLock { s in
            guard let meter = s.meter, s.frames > 0 else { return nil }
            var lufs = 0.0
            let loudness = ebur128_loudness_global(meter, &lufs) == 0 && lufs.isFinite ? lufs : nil
            return LoudnessResult(loudness: loudness, peak: Self.peak(meter, channels: s.channels), seconds: Double(s.frames) / Double(s.rate))
        }
    }

    private static func peak(_ meter: UnsafeMutablePointer<ebur128_state>, channels: UInt32) -> Double {
        var highest = 0.0
        let truePeak = (meter.pointee.mode & Int32(EBUR128_MODE_TRUE_PEAK.rawValue)) == Int32(EBUR128_MODE_TRUE_PEAK.rawValue)
        for channel in 0..<channels {
            var value = 0.0
            let ok = truePeak ? ebur128_true_peak(meter, channel, &value) : ebur128_sample_peak(meter, channel, &value)
            if ok == 0 { highest = max(highest, value) }
        }
        return highest
    }

    /// The files as one programme.
    static func album(_ meters: [Accumulator]) -> LoudnessResult? {
        guard !meters.isEmpty else { return nil }
        var pointers: [UnsafeMutablePointer<ebur128_state>?] = []
        var peak = 0.0, seconds = 0.0
        for meter in meters {
            guard let r = meter.result() else { continue }
            peak = max(peak, r.peak)
            seconds += r.seconds
            pointers.append(meter.state.withLock { $0.meter })
        }
        guard !pointers.isEmpty else { return nil }
        var lufs = 0.0
        let ok = pointers.withUnsafeMutableBufferPointer { ebur128_loudness_global_multiple($0.baseAddress, $0.count, &lufs) } == 0
        return LoudnessResult(loudness: ok && lufs.isFinite ? lufs : nil, peak: peak, seconds: seconds)
    }
}

import CGStreamer
import Foundation

/// Decodes a whole file to interleaved 16-bit PCM as fast as it goes, through a pipeline of its own
/// (uridecodebin ! audioconvert ! appsink), handing each buffer to the caller. Blocking: run it off the cooperative
/// pool.
public enum PCMDecoder {
    /// What was decoded: the stream's rate and channel count (of its first buffer).
    public struct Format: Sendable, Equatable {
        public var sampleRate: Int
        public var channels: Int
    }

    /// How long the decoder may go without handing over a buffer before the file counts as broken. GStreamer 1.22
    /// sometimes loses the error of a broken file (measured: a truncated Ogg posted "can't get first chain" on the
    /// first one or two pipelines of a process, then nothing, every time after), leaving the pipeline waiting.
    public static let stallLimit: Duration = .seconds(10)

    /// Decodes `uri`, calling `consume` on this thread with each buffer's interleaved samples and channel count.
    /// Throws `PlaybackError`: the file's own error (missing, not audio, corrupt), no audio at all, no buffer for
    /// `stallLimit` (a stream error), or taking longer than `timeout` (a core error saying so).
    public static func decode(uri: String, timeout: Duration, stallLimit: Duration = stallLimit,
                              consume: (UnsafeBufferPointer<Int16>, Int) -> Void) throws(PlaybackError) -> Format {
        GStreamer.ensureInitialized()
        if let problem = MediaPrecheck.check(uri, typefind: true) { throw problem }
        let decoder = try DecodePipeline(uri: uri, caps: "audio/x-raw,format=S16LE,layout=interleaved",
                                         sink: "appsink name=sink sync=false max-buffers=64")
        guard let sinkElement = decoder.sink() else {
            throw PlaybackError(domain: "core", code: 0, message: "the decoder has no sink", debug: nil)
        }
        defer { gst_object_unref(sinkElement) }
        let sink = tn_app_sink(sinkElement)
        guard decoder.set(GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
            try decoder.throwPostedError()
            throw PlaybackError(domain: "core", code: 0, message: "the decoder would not start", debug: uri)
        }
        let deadline = ContinuousClock.now + timeout
        var lastProgress = ContinuousClock.now
        var format: Format?
        while true {
            try decoder.throwPostedError()
            if ContinuousClock.now > deadline {
                throw PlaybackError(domain: "core", code: 0, message: "decoding took longer than \(timeout)", debug: uri)
            }
            guard let sample = gst_app_sink_try_pull_sample(sink, 100 * tn_msecond()) else {
                if gst_app_sink_is_eos(sink) != 0 { break }
                if ContinuousClock.now - lastProgress > stallLimit {
                    throw PlaybackError(domain: "stream", code: 7,
                                        message: format == nil ? "The stream never started: the file is damaged or not audio."
                                                               : "Decoding stalled: the file is damaged.", debug: uri)
                }
                continue
            }
            lastProgress = ContinuousClock.now
            defer { gst_sample_unref(sample) }
            var info = GstAudioInfo()
            guard let caps = gst_sample_get_caps(sample), gst_audio_info_from_caps(&info, caps) != 0, info.channels > 0 else { continue }
            if format == nil { format = Format(sampleRate: Int(info.rate), channels: Int(info.channels)) }
            guard let buffer = gst_sample_get_buffer(sample) else { continue }
            var map = GstMapInfo()
            guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { continue }
            defer { gst_buffer_unmap(buffer, &map) }
            if let data = map.data, map.size >= 2 {
                data.withMemoryRebound(to: Int16.self, capacity: Int(map.size) / 2) { samples in
                    consume(UnsafeBufferPointer(start: samples, count: Int(map.size) / 2), Int(info.channels))
                }
            }
        }
        // An error posted as the stream ended (a decoder giving up on the last frames) still counts.
        try decoder.throwPostedError()
        guard let format else {
            throw PlaybackError(domain: "stream", code: 7, message: "No audio was decoded.", debug: uri)
        }
        return format
    }
}

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
        let description = "uridecodebin name=decode ! audioconvert ! audio/x-raw,format=S16LE,layout=interleaved"
            + " ! appsink name=sink sync=false max-buffers=64"
        var error: UnsafeMutablePointer<GError>?
        guard let pipeline = gst_parse_launch_full(description, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error) else {
            throw GStreamer.consume(error, fallback: "cannot build a decoder")
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(pipeline)
        defer {
            _ = gst_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(pipeline)
        }
        if let decode = gst_bin_get_by_name(tn_bin(pipeline), "decode") {
            tn_object_set_string(decode, "uri", uri)
            gst_object_unref(decode)
        }
        guard let sinkElement = gst_bin_get_by_name(tn_bin(pipeline), "sink"), let bus = gst_element_get_bus(pipeline) else {
            throw PlaybackError(domain: "core", code: 0, message: "the decoder has no sink or bus", debug: nil)
        }
        defer {
            gst_object_unref(sinkElement)
            gst_object_unref(bus)
        }
        let sink = tn_app_sink(sinkElement)
        guard gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
            if let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
                defer { gst_message_unref(message) }
                throw GStreamer.parseError(message)
            }
            throw PlaybackError(domain: "core", code: 0, message: "the decoder would not start", debug: uri)
        }
        let deadline = ContinuousClock.now + timeout
        var lastProgress = ContinuousClock.now
        var format: Format?
        while true {
            if let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
                defer { gst_message_unref(message) }
                throw GStreamer.parseError(message)
            }
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
        if let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
            defer { gst_message_unref(message) }
            throw GStreamer.parseError(message)
        }
        guard let format else {
            throw PlaybackError(domain: "stream", code: 7, message: "No audio was decoded.", debug: uri)
        }
        return format
    }
}

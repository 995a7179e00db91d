import CGStreamer
import Foundation

/// Decodes a whole file as fast as it goes, to prove it decodes to the end (a truncated file stops short or
/// fails). Blocking: run it off the cooperative pool.
public enum DecodeCheck {
    /// The length decoded, in ns. Throws `PlaybackError` when decoding fails or takes longer than `timeout`.
    public static func decodedLength(uri: String, timeout: Duration = .seconds(120)) throws(PlaybackError) -> Int64 {
        GStreamer.ensureInitialized()
        var error: UnsafeMutablePointer<GError>?
        guard let pipeline = gst_parse_launch_full("uridecodebin name=decode ! audioconvert ! fakesink name=sink sync=false",
                                                   nil, GST_PARSE_FLAG_FATAL_ERRORS, &error) else {
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
        guard let bus = gst_element_get_bus(pipeline) else {
            throw PlaybackError(domain: "core", code: 0, message: "the decoder has no bus", debug: nil)
        }
        defer { gst_object_unref(bus) }
        _ = gst_element_set_state(pipeline, GST_STATE_PLAYING)
        let deadline = ContinuousClock.now + timeout
        var last: gint64 = 0
        let wanted = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        while ContinuousClock.now < deadline {
            if let message = gst_bus_timed_pop_filtered(bus, 50 * tn_msecond(), wanted) {
                defer { gst_message_unref(message) }
                if message.pointee.type == GST_MESSAGE_ERROR { throw GStreamer.parseError(message) }
                var position: gint64 = 0
                if gst_element_query_position(pipeline, GST_FORMAT_TIME, &position) != 0 { last = max(last, position) }
                return Int64(last)
            }
            var position: gint64 = 0
            if gst_element_query_position(pipeline, GST_FORMAT_TIME, &position) != 0 { last = max(last, position) }
        }
        throw PlaybackError(domain: "core", code: 0, message: "decoding took longer than \(timeout)", debug: uri)
    }
}

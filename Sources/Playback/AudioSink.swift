import CGStreamer
import Foundation
import Logging

/// Builds the audio sink bin a description names.
enum AudioSink {
    /// For the plain default `autoaudiosink`, checks what it picks: with no usable device it silently falls back to
    /// a fakesink; we then use our own clock-synchronised `fakesink sync=true` and say so once.
    /// Returns a non-floating reference the caller must unref, and whether it is a null sink.
    static func make(_ description: String, logger: Logger) throws -> (UnsafeMutablePointer<GstElement>, Bool) {
        let desc = description.trimmingCharacters(in: .whitespacesAndNewlines)
        if desc == PlaybackEngine.defaultSink {
            if let auto = gst_element_factory_make("autoaudiosink", nil) {
                _ = gst_object_ref_sink(auto)
                var usable = false
                if gst_element_set_state(auto, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE,
                   let child = tn_bin_first_child(tn_bin(auto)) {
                    let name = tn_element_factory_name(child).map { String(cString: $0) } ?? ""
                    gst_object_unref(child)
                    usable = !(name.isEmpty || name.hasPrefix("fake"))
                    logger.debug("autoaudiosink picked \(name.isEmpty ? "nothing" : name)")
                }
                _ = gst_element_set_state(auto, GST_STATE_NULL)
                if usable { return (auto, false) }
                gst_object_unref(auto)
            }
            logger.notice("no audio device found; playing to a silent clock-synchronised null sink")
            return (try parse("fakesink sync=true"), true)
        }
        return (try parse(desc), desc.hasPrefix("fakesink") || desc.hasPrefix("fakeaudiosink"))
    }

    static func parse(_ desc: String) throws -> UnsafeMutablePointer<GstElement> {
        var error: UnsafeMutablePointer<GError>?
        let bin = gst_parse_bin_from_description_full(desc, 1, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error)
        guard let bin else {
            var e = GStreamer.consume(error, fallback: "could not build the sink")
            e.debug = e.message
            e.domain = "core"
            e.message = "invalid audio-sink description '\(desc)': \(e.debug ?? "")"
            throw e
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(bin)
        guard let pad = gst_element_get_static_pad(bin, "sink") else {
            gst_object_unref(bin)
            throw PlaybackError(domain: "core", code: 0,
                                message: "invalid audio-sink description '\(desc)': it has no unlinked sink pad to feed audio into")
        }
        gst_object_unref(pad)
        return bin
    }
}

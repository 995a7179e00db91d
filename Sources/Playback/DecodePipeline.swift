import CGStreamer

/// A pipeline of its own that decodes one URI to raw audio for an offline job (the decode check, loudness, the
/// waveform): `uridecodebin ! audioconvert ! CAPS ! SINK`. It owns the pipeline and its bus, and sets the pipeline to
/// NULL and frees both when it goes away, on every path out of the job.
struct DecodePipeline: ~Copyable {
    let pipeline: UnsafeMutablePointer<GstElement>
    let bus: UnsafeMutablePointer<GstBus>

    /// `caps`: a caps filter after audioconvert, or nil; `sink`: the sink's description, named `sink`.
    init(uri: String, caps: String?, sink: String) throws(PlaybackError) {
        GStreamer.ensureInitialized()
        let description = ["uridecodebin name=decode", "audioconvert", caps, sink].compactMap { $0 }.joined(separator: " ! ")
        var error: UnsafeMutablePointer<GError>?
        guard let pipeline = gst_parse_launch_full(description, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error) else {
            throw GStreamer.consume(error, fallback: "cannot build a decoder")
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(pipeline)
        guard let bus = gst_element_get_bus(pipeline) else {
            gst_object_unref(pipeline)
            throw PlaybackError(domain: "core", code: 0, message: "the decoder has no bus", debug: nil)
        }
        self.pipeline = pipeline
        self.bus = bus
        if let decode = gst_bin_get_by_name(tn_bin(pipeline), "decode") {
            tn_object_set_string(decode, "uri", uri)
            gst_object_unref(decode)
        }
    }

    deinit {
        _ = gst_element_set_state(pipeline, GST_STATE_NULL)
        gst_object_unref(bus)
        gst_object_unref(pipeline)
    }

    /// The sink element, with a reference the caller releases.
    func sink() -> UnsafeMutablePointer<GstElement>? { gst_bin_get_by_name(tn_bin(pipeline), "sink") }

    @discardableResult
    func set(_ state: GstState) -> GstStateChangeReturn { gst_element_set_state(pipeline, state) }

    /// How far the pipeline has decoded, in ns, when it can tell.
    func position() -> Int64? {
        var position: gint64 = 0
        return gst_element_query_position(pipeline, GST_FORMAT_TIME, &position) != 0 ? Int64(position) : nil
    }

    /// Waits up to `timeout` for the end of the stream: true at EOS, false when nothing came; an error message throws.
    func waitForEnd(timeout: GstClockTime) throws(PlaybackError) -> Bool {
        let wanted = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        guard let message = gst_bus_timed_pop_filtered(bus, timeout, wanted) else { return false }
        defer { gst_message_unref(message) }
        if message.pointee.type == GST_MESSAGE_ERROR { throw GStreamer.parseError(message) }
        return true
    }

    /// Throws the error a part of the pipeline posted, if any (without waiting).
    func throwPostedError() throws(PlaybackError) {
        guard let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return }
        defer { gst_message_unref(message) }
        throw GStreamer.parseError(message)
    }
}

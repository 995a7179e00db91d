import CGStreamer

/// Reads a file's metadata without playing it (GstDiscoverer).
public enum MediaProbe {
    public static let defaultTimeout: Duration = .seconds(5)

    /// Duration (ns) and tags of `uri`. Throws `PlaybackError` when it cannot be read, is
    /// corrupt, has no audio stream, or times out.
    public static func probe(uri: String) throws -> (duration: Int64?, tags: StreamTags) {
        try probe(uri: uri, timeout: defaultTimeout)
    }

    public static func probe(uri: String, timeout: Duration) throws -> (duration: Int64?, tags: StreamTags) {
        try discover(uri: uri, timeout: timeout) { info, _ in
            let d = gst_discoverer_info_get_duration(info)
            let duration: Int64? = (d == tn_clock_time_none() || d == 0) ? nil : Int64(d)
            var tags = StreamTags()
            if let list = gst_discoverer_info_get_tags(info) {
                tags = GStreamer.streamTags(list)
            }
            return (duration, tags)
        }
    }

    /// The caps of the first audio stream, as text ("audio/x-vorbis, channels=(int)2, …").
    public static func audioCaps(uri: String, timeout: Duration = defaultTimeout) throws(PlaybackError) -> String {
        do {
            return try discover(uri: uri, timeout: timeout) { _, stream in
                guard let caps = gst_discoverer_stream_info_get_caps(stream) else { return "" }
                defer { gst_caps_unref(caps) }
                guard let text = gst_caps_to_string(caps) else { return "" }
                defer { g_free(text) }
                return String(cString: text)
            }
        } catch let error as PlaybackError {
            throw error
        } catch {
            throw PlaybackError(domain: "core", code: 0, message: "\(error)", debug: uri)
        }
    }

    /// Runs the discoverer on `uri` and hands its result and first audio stream to `body`.
    private static func discover<T>(uri: String, timeout: Duration,
                                    _ body: (OpaquePointer, OpaquePointer) -> T) throws -> T {
        GStreamer.ensureInitialized()
        if let problem = MediaPrecheck.check(uri) { throw problem }
        let ns = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(max(1, ns)), &error) else {
            throw GStreamer.consume(error, fallback: "could not create a discoverer")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        if let error { g_error_free(error) }
        error = nil
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        defer { if let info { g_object_unref(UnsafeMutableRawPointer(info)) } }
        let result = info.map { gst_discoverer_info_get_result($0) } ?? GST_DISCOVERER_ERROR
        switch result {
        case GST_DISCOVERER_OK:
            if let error { g_error_free(error) }
        case GST_DISCOVERER_TIMEOUT:
            if let error { g_error_free(error) }
            throw PlaybackError(domain: "core", code: 0, message: "Timed out reading the file.", debug: uri)
        case GST_DISCOVERER_URI_INVALID:
            if let error { g_error_free(error) }
            throw PlaybackError(domain: "resource", code: 3, message: "Invalid URI.", debug: uri)
        case GST_DISCOVERER_MISSING_PLUGINS:
            if let error { g_error_free(error) }
            throw PlaybackError(domain: "core", code: 12, message: "No decoder available for this type.", debug: uri)
        default:
            throw GStreamer.consume(error, fallback: "could not read \(uri)")
        }
        guard let info else { throw PlaybackError(domain: "core", code: 0, message: "no result", debug: uri) }
        guard let audio = gst_discoverer_info_get_audio_streams(info), let first = audio.pointee.data else {
            throw PlaybackError(domain: "stream", code: 6, message: "The file has no audio stream.", debug: uri)
        }
        defer { gst_discoverer_stream_info_list_free(audio) }
        return body(info, OpaquePointer(first))
    }
}

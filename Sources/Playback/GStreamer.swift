import CGStreamer

/// Process-wide GStreamer set-up and conversions from GStreamer's C values to Swift values.
enum GStreamer {
    private static let initialized: Bool = {
        gst_init(nil, nil)
        return true
    }()

    /// Calls `gst_init` once per process (thread-safe).
    static func ensureInitialized() {
        _ = initialized
    }

    static var second: Int64 { Int64(tn_second()) }

    // MARK: Errors

    static func domainName(_ quark: GQuark) -> String {
        if quark == gst_stream_error_quark() { return "stream" }
        if quark == gst_resource_error_quark() { return "resource" }
        if quark == gst_core_error_quark() { return "core" }
        if quark == gst_library_error_quark() { return "library" }
        if let name = g_quark_to_string(quark) { return String(cString: name) }
        return "unknown"
    }

    /// Converts a GError (does not free it).
    static func playbackError(_ error: UnsafePointer<GError>, debug: String? = nil) -> PlaybackError {
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        return PlaybackError(domain: domainName(error.pointee.domain), code: Int(error.pointee.code),
                             message: message, debug: debug)
    }

    /// Converts and frees a GError.
    static func consume(_ error: UnsafeMutablePointer<GError>?, fallback: String) -> PlaybackError {
        guard let error else { return PlaybackError(domain: "core", code: 0, message: fallback) }
        defer { g_error_free(error) }
        return playbackError(error)
    }

    /// Parses an ERROR or WARNING message.
    static func parseError(_ msg: UnsafeMutablePointer<GstMessage>, warning: Bool = false) -> PlaybackError {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        if warning {
            gst_message_parse_warning(msg, &gerror, &debug)
        } else {
            gst_message_parse_error(msg, &gerror, &debug)
        }
        defer {
            if let gerror { g_error_free(gerror) }
            g_free(debug)
        }
        let debugText = debug.map { String(cString: $0) }
        guard let gerror else { return PlaybackError(domain: "core", code: 0, message: "unknown error", debug: debugText) }
        return playbackError(gerror, debug: debugText)
    }

    // MARK: Tags

    static func strings(_ list: UnsafePointer<GstTagList>, _ tag: String) -> [String] {
        let count = gst_tag_list_get_tag_size(list, tag)
        var result: [String] = []
        for index in 0..<count {
            var value: UnsafePointer<gchar>?
            if gst_tag_list_peek_string_index(list, tag, index, &value) != 0, let value {
                let s = String(cString: value)
                if !s.isEmpty { result.append(s) }
            }
        }
        return result
    }

    static func uint(_ list: UnsafePointer<GstTagList>, _ tag: String) -> Int? {
        var value: guint = 0
        return gst_tag_list_get_uint(list, tag, &value) != 0 ? Int(value) : nil
    }

    static func date(_ list: UnsafePointer<GstTagList>) -> String? {
        var dateTime: OpaquePointer?
        if gst_tag_list_get_date_time(list, GST_TAG_DATE_TIME, &dateTime) != 0, let dateTime {
            defer { gst_date_time_unref(dateTime) }
            if let text = gst_date_time_to_iso8601_string(dateTime) {
                defer { g_free(text) }
                return String(cString: text)
            }
        }
        var date: UnsafeMutablePointer<GDate>?
        if gst_tag_list_get_date(list, GST_TAG_DATE, &date) != 0, let date {
            defer { g_date_free(date) }
            guard g_date_valid(date) != 0 else { return nil }
            let y = Int(g_date_get_year(date)), m = Int(g_date_get_month(date).rawValue), d = Int(g_date_get_day(date))
            return isoDate(y, m, d)
        }
        return nil
    }

    private static func isoDate(_ y: Int, _ m: Int, _ d: Int) -> String {
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }

    static func image(_ list: UnsafePointer<GstTagList>, _ tag: String) -> [UInt8]? {
        var sample: OpaquePointer?
        guard gst_tag_list_get_sample(list, tag, &sample) != 0, let sample else { return nil }
        defer { gst_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        var info = GstMapInfo()
        guard gst_buffer_map(buffer, &info, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &info) }
        guard let data = info.data, info.size > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(info.size)))
    }

    static func streamTags(_ list: UnsafePointer<GstTagList>) -> StreamTags {
        var tags = StreamTags()
        tags.title = strings(list, GST_TAG_TITLE).first
        tags.artists = strings(list, GST_TAG_ARTIST)
        tags.album = strings(list, GST_TAG_ALBUM).first
        tags.albumArtists = strings(list, GST_TAG_ALBUM_ARTIST)
        tags.trackNumber = uint(list, GST_TAG_TRACK_NUMBER)
        tags.discNumber = uint(list, GST_TAG_ALBUM_VOLUME_NUMBER)
        tags.genres = strings(list, GST_TAG_GENRE)
        tags.date = date(list)
        tags.comment = strings(list, GST_TAG_COMMENT).first
        tags.organization = strings(list, GST_TAG_ORGANIZATION).first
        tags.image = image(list, GST_TAG_IMAGE) ?? image(list, GST_TAG_PREVIEW_IMAGE)
        return tags
    }
}

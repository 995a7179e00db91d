import CGStreamer

/// What this machine's GStreamer can play, read from the plugin registry.
public enum MediaSupport {
    /// Container / stream types that are not `audio/*` but hold audio we can play.
    static let audioContainers: Set<String> = [
        "application/ogg", "application/x-ogg", "application/x-id3", "application/x-apetag",
        "audio/midi", "audio/riff-midi", "audio/x-midi", "video/quicktime", "audio/x-m4a", "application/x-3gp",
        "video/x-matroska", "audio/webm", "video/webm", "audio/x-matroska", "application/x-annodex",
    ]
    /// Raw or internal caps that are not file types.
    static let excluded: Set<String> = ["audio/x-raw", "audio/x-unaligned-raw"]
    /// Common alternative names desktop files and browsers use for the same types.
    static let aliases: [String: [String]] = [
        "audio/x-flac": ["audio/flac"],
        "audio/x-wav": ["audio/wav", "audio/vnd.wave"],
        "application/ogg": ["audio/ogg", "audio/x-vorbis+ogg", "audio/x-opus+ogg"],
        "audio/mpeg": ["audio/mp3", "audio/x-mp3", "audio/x-mpeg"],
        "audio/midi": ["audio/x-midi"],
        "audio/x-m4a": ["audio/mp4", "audio/m4a", "audio/aac"],
        "audio/x-aiff": ["audio/aiff"],
        "audio/x-opus": ["audio/opus"],
    ]

    /// Why GStreamer's libraries cannot be opened here, or nil when they can: the first GStreamer call ends a process
    /// that has none, so `tonearm doctor` asks this first.
    public static var libraryProblem: String? {
        var why = [CChar](repeating: 0, count: 512)
        guard tn_gst_library_problem(&why, why.count) != 0 else { return nil }
        return String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodable MIME types: sink caps of decoders, demuxers and parsers, audio-relevant only
    /// (audio/*, application/ogg, application/x-id3, audio/midi…), plus common aliases. Sorted.
    public static func supportedMimeTypes() -> [String] { cachedMimeTypes }

    /// The registry does not change while the process runs: read once.
    private static let cachedMimeTypes: [String] = readMimeTypes()

    private static func readMimeTypes() -> [String] {
        GStreamer.ensureInitialized()
        var types = Set<String>()
        forEachElementFactory { factory in
            guard let klassPtr = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) else { return }
            let klass = String(cString: klassPtr)
            guard klass.contains("Decoder") || klass.contains("Demuxer") || klass.contains("Parser") else { return }
            var node = gst_element_factory_get_static_pad_templates(factory)
            while let current = node {
                if let data = current.pointee.data, let caps = tn_static_sink_template_caps(data) {
                    if gst_caps_is_any(caps) == 0 {
                        for index in 0..<gst_caps_get_size(caps) {
                            guard let structure = gst_caps_get_structure(caps, index),
                                  let name = gst_structure_get_name(structure) else { continue }
                            let mime = String(cString: name)
                            if excluded.contains(mime) { continue }
                            if mime.hasPrefix("audio/") || audioContainers.contains(mime) { types.insert(mime) }
                        }
                    }
                    gst_caps_unref(caps)
                }
                node = UnsafePointer(current.pointee.next)
            }
        }
        for (mime, more) in aliases where types.contains(mime) { types.formUnion(more) }
        return types.sorted()
    }

    /// Whether GStreamer here has an element factory named `name` ("fluiddec").
    public static func hasElement(_ name: String) -> Bool {
        GStreamer.ensureInitialized()
        guard let factory = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }

    /// URI schemes GStreamer has a source for ("file", "http", "https"…). Sorted.
    public static func supportedURISchemes() -> [String] {
        GStreamer.ensureInitialized()
        var schemes = Set<String>()
        forEachElementFactory { factory in
            guard gst_element_factory_get_uri_type(factory) == GST_URI_SRC,
                  let protocols = gst_element_factory_get_uri_protocols(factory) else { return }
            var index = 0
            while let p = protocols[index] {
                schemes.insert(String(cString: p))
                index += 1
            }
        }
        return schemes.sorted()
    }

    private static func forEachElementFactory(_ body: (OpaquePointer) -> Void) {
        guard let list = gst_registry_get_feature_list(gst_registry_get(), gst_element_factory_get_type()) else { return }
        defer { gst_plugin_feature_list_free(list) }
        var node: UnsafeMutablePointer<GList>? = list
        while let current = node {
            if let data = current.pointee.data {
                body(OpaquePointer(data))
            }
            node = current.pointee.next
        }
    }
}

import CGStreamer
import Foundation
import Synchronization

/// Writes a copy of a media file in another form, through a GStreamer pipeline of its own (never the player's):
/// the same audio stream in the container that fits it (passthrough), or re-encoded (transcode). Tags and cover
/// art travel as tag events. Blocking: run it off the cooperative pool.
public enum MediaExport {
    /// What to write.
    public enum Mode: Sendable, Equatable, CustomStringConvertible {
        /// The stream as it is, in the container that fits it.
        case passthrough
        /// Re-encoded to one of `Format`.
        case transcode(Format)

        public var description: String {
            switch self {
            case .passthrough: "passthrough"
            case .transcode(let f): f.rawValue
            }
        }
    }

    /// Transcode targets, by file extension.
    public enum Format: String, Sendable, CaseIterable {
        case m4a, ogg, opus, flac, mp3

        /// Encoder and container, after `audioconvert ! audioresample`.
        var chain: String {
            switch self {
            case .m4a: "voaacenc bitrate=192000 ! mp4mux"
            case .ogg: "vorbisenc quality=0.6 ! oggmux"
            case .opus: "audioresample ! audio/x-raw,rate=48000 ! opusenc bitrate=160000 ! oggmux"
            case .flac: "flacenc"
            case .mp3: "lamemp3enc target=quality quality=2 ! xingmux ! id3v2mux"
            }
        }
    }

    /// How the stream of a passthrough export is written: the elements after parsebin, and the extension.
    public struct Plan: Sendable, Equatable {
        public var chain: String
        public var fileExtension: String

        /// A plan with these fields.
        public init(chain: String, fileExtension: String) {
            self.chain = chain
            self.fileExtension = fileExtension
        }
    }

    /// The passthrough plan for a stream with these caps (as `MediaProbe.audioCaps` gives them).
    public static func passthroughPlan(caps: String) throws(PlaybackError) -> Plan {
        let name = caps.split(separator: ",", maxSplits: 1).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
        func field(_ key: String) -> String? {
            guard let range = caps.range(of: key + "=") else { return nil }
            var value = caps[range.upperBound...].prefix { $0 != "," && $0 != ";" }
            if let close = value.firstIndex(of: ")") { value = value[value.index(after: close)...] }
            return value.trimmingCharacters(in: .whitespaces)
        }
        switch name {
        case "audio/mpeg" where field("mpegversion") == "1":
            return Plan(chain: "mpegaudioparse ! id3v2mux", fileExtension: "mp3")
        case "audio/mpeg" where field("mpegversion") == "4" || field("mpegversion") == "2":
            return Plan(chain: "aacparse ! mp4mux", fileExtension: "m4a")
        case "audio/x-alac":
            return Plan(chain: "mp4mux", fileExtension: "m4a")
        case "audio/x-vorbis":
            return Plan(chain: "oggmux", fileExtension: "ogg")
        case "audio/x-opus":
            return Plan(chain: "oggmux", fileExtension: "opus")
        case "audio/x-flac":
            return Plan(chain: "flacparse ! flactag", fileExtension: "flac")
        case "audio/x-wav":
            // The discoverer names the container for PCM (and a-law, µ-law) in WAV; wavenc takes what wavparse gives.
            return Plan(chain: "wavenc", fileExtension: "wav")
        case "audio/x-aiff":
            return Plan(chain: "aiffmux", fileExtension: "aiff")
        case "audio/x-raw":
            let format = field("format") ?? ""
            if format.hasSuffix("BE") { return Plan(chain: "aiffmux", fileExtension: "aiff") }
            return Plan(chain: "wavenc", fileExtension: "wav")
        default:
            throw PlaybackError(domain: "stream", code: 6,
                                message: "no container takes a \(name.isEmpty ? "stream of unknown type" : name) stream as it is; export it with a transcode mode",
                                debug: caps)
        }
    }

    /// The passthrough plan for a file: WAV and AIFF are known from their first bytes; the discoverer names the
    /// stream of anything else.
    public static func passthroughPlan(file: String) throws(PlaybackError) -> Plan {
        let container = typefind(file)
        let caps = ["audio/x-wav", "audio/x-aiff"].contains(container) ? container!
            : try MediaProbe.audioCaps(uri: URL(fileURLWithPath: file).absoluteString, timeout: .seconds(30))
        return try passthroughPlan(caps: caps)
    }

    /// Something that says stop: set it from any thread.
    public final class Cancellation: Sendable {
        private let flag = Atomic<Bool>(false)
        public init() {}
        public func cancel() { flag.store(true, ordering: .relaxed) }
        public var isCancelled: Bool { flag.load(ordering: .relaxed) }
    }

    /// Writes `source` (a file path) to `destination` in `mode`. `progress` gets 0…1 now and then (on this thread).
    /// On failure or cancellation the destination may hold a partial file: the caller writes to a temporary name.
    /// `plan`: the passthrough plan when the caller already made it (so the file is not probed twice).
    public static func run(source: String, destination: String, mode: Mode, plan: Plan? = nil, cancellation: Cancellation,
                           progress: (Double) -> Void) throws(PlaybackError) {
        try run(source: source, destination: destination, mode: mode, plan: plan, isCancelled: { cancellation.isCancelled },
                progress: progress)
    }

    /// `run` with the cancellation asked through `isCancelled` (called on this thread, about ten times a second).
    public static func run(source: String, destination: String, mode: Mode, plan: Plan? = nil, isCancelled: () -> Bool,
                           progress: (Double) -> Void) throws(PlaybackError) {
        GStreamer.ensureInitialized()
        let description: String
        switch mode {
        case .passthrough:
            let chosen: Plan
            if let plan { chosen = plan } else { chosen = try passthroughPlan(file: source) }
            description = "filesrc name=source ! parsebin ! \(chosen.chain) ! filesink name=sink"
        case .transcode(let format):
            description = "uridecodebin name=decode ! audioconvert ! audioresample ! \(format.chain) ! filesink name=sink"
        }
        var error: UnsafeMutablePointer<GError>?
        guard let pipeline = gst_parse_launch_full(description, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error) else {
            throw GStreamer.consume(error, fallback: "cannot build the export pipeline '\(description)'")
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(pipeline)
        defer {
            _ = gst_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(pipeline)
        }
        let bin = tn_bin(pipeline)
        if let sink = gst_bin_get_by_name(bin, "sink") {
            tn_object_set_string(sink, "location", destination)
            gst_object_unref(sink)
        }
        if let src = gst_bin_get_by_name(bin, "source") {
            tn_object_set_string(src, "location", source)
            gst_object_unref(src)
        }
        if let decode = gst_bin_get_by_name(bin, "decode") {
            tn_object_set_string(decode, "uri", URL(fileURLWithPath: source).absoluteString)
            gst_object_unref(decode)
        }
        guard gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
            throw firstError(pipeline) ?? PlaybackError(domain: "core", code: 0, message: "the export pipeline would not start", debug: description)
        }
        guard let bus = gst_element_get_bus(pipeline) else {
            throw PlaybackError(domain: "core", code: 0, message: "the export pipeline has no bus", debug: nil)
        }
        defer { gst_object_unref(bus) }
        let wanted = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        progress(0)
        while true {
            if isCancelled() {
                throw PlaybackError(domain: "core", code: 0, message: "the export was cancelled", debug: nil)
            }
            if let message = gst_bus_timed_pop_filtered(bus, 100 * tn_msecond(), wanted) {
                defer { gst_message_unref(message) }
                if message.pointee.type == GST_MESSAGE_EOS { break }
                throw GStreamer.parseError(message)
            }
            var position: gint64 = 0
            var duration: gint64 = 0
            if gst_element_query_position(pipeline, GST_FORMAT_TIME, &position) != 0,
               gst_element_query_duration(pipeline, GST_FORMAT_TIME, &duration) != 0, duration > 0 {
                progress(min(1, max(0, Double(position) / Double(duration))))
            }
        }
        progress(1)
    }

    /// The media type GStreamer's typefinders give the file's first bytes.
    public static func typefind(_ path: String) -> String? {
        // Before gst_init the registry is empty and every file types as nothing: an idle daemon's first export comes here.
        GStreamer.ensureInitialized()
        var probability: guint = 0
        guard let name = tn_typefind_file(path, 4096, &probability) else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }

    private static func firstError(_ pipeline: UnsafeMutablePointer<GstElement>) -> PlaybackError? {
        guard let bus = gst_element_get_bus(pipeline) else { return nil }
        defer { gst_object_unref(bus) }
        guard let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
        defer { gst_message_unref(message) }
        return GStreamer.parseError(message)
    }
}

import CGStreamer
import Foundation

/// Cheap checks of a file URI before it is handed to playbin.
public enum MediaPrecheck {
    /// It must exist, be readable and (with `typefind`) its first 64 KiB must look like audio. A bad next item handed
    /// over stalls playbin, sometimes before the current item is even heard. Non-file URIs pass.
    public static func check(_ uri: String, typefind: Bool = false) -> PlaybackError? {
        guard uri.hasPrefix("file:") else { return nil }
        guard let path = g_filename_from_uri(uri, nil, nil) else {
            return PlaybackError(domain: "resource", code: 3, message: "Resource not found.", debug: "invalid file URI: \(uri)")
        }
        defer { g_free(path) }
        if access(path, R_OK) != 0 {
            return PlaybackError(domain: "resource", code: errno == EACCES ? 6 : 3,
                                 message: errno == EACCES ? "Could not open resource for reading." : "Resource not found.",
                                 debug: "\(String(cString: path)): \(String(cString: strerror(errno)))")
        }
        guard typefind else { return nil }
        // Nothing to type: told at once, without setting GStreamer up (a start's broken files are checked while the
        // engine is still being built).
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size == 0 {
            // GST_STREAM_ERROR_TYPE_NOT_FOUND, as playback would report it.
            return PlaybackError(domain: "stream", code: 4, message: "Stream contains no data.",
                                 debug: "\(String(cString: path)) is empty")
        }
        GStreamer.ensureInitialized()
        var probability: guint = 0
        guard let name = tn_typefind_file(path, 65_536, &probability) else {
            // GST_STREAM_ERROR_TYPE_NOT_FOUND, as playback would report it.
            return PlaybackError(domain: "stream", code: 4, message: "Could not determine type of stream.",
                                 debug: "typefind found nothing in \(String(cString: path))")
        }
        defer { g_free(name) }
        let type = String(cString: name)
        if !Self.mayHoldAudio(type, probability: probability) {
            // GST_STREAM_ERROR_WRONG_TYPE
            return PlaybackError(domain: "stream", code: 6, message: "Not an audio file (\(type)).",
                                 debug: String(cString: path))
        }
        return nil
    }

    /// Containers that carry audio (or video with sound), by typefind's caps name and how sure it is. An allow list:
    /// typefind names random bytes now and then as something else; in 3,000 files of noise, 5 were
    /// "application/x-subtitle-lrc" (sure: 100), 5 "video/x-h263" (50, possible) and 1 "video/mpeg" (40). Video
    /// therefore counts only when typefind finds it at least likely (80): real containers come out at 100.
    static func mayHoldAudio(_ type: String, probability: guint = 100) -> Bool {
        if type.hasPrefix("audio/") { return true }
        if type.hasPrefix("video/") { return type != "video/x-raw" && probability >= guint(GST_TYPE_FIND_LIKELY.rawValue) }
        return [
            "application/ogg", "application/x-ogg", "application/x-ogm-audio", "application/x-ogm-video", "application/x-id3",
            "application/x-apetag", "application/x-3gp", "application/vnd.rn-realmedia", "application/mxf", "application/x-annodex",
        ].contains(type)
    }
}

/// A GStreamer error (or one of the engine's own) as plain Swift values.
///
/// `domain` is the GStreamer error domain: "stream", "resource", "core" or "library"
/// (engine-made errors such as a preroll time-out use "core"). `code` is the GStreamer code
/// within that domain (e.g. resource 3 = not found, stream 4 = could not determine type).
public struct PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
    public var domain: String
    public var code: Int
    public var message: String
    public var debug: String?

    public init(domain: String, code: Int, message: String, debug: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
        self.debug = debug
    }

    public var description: String { "\(domain) error \(code): \(message)" }
}

extension PlaybackError {
    /// GStreamer's GST_RESOURCE_ERROR_NOT_FOUND.
    static func resourceNotFound(_ uri: String) -> PlaybackError {
        PlaybackError(domain: "resource", code: 3, message: "Resource not found.", debug: "no such file: \(uri)")
    }

    /// The item did not preroll in time (engine-made, domain "core").
    static func timedOut(_ limit: Duration) -> PlaybackError {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return PlaybackError(domain: "core", code: 0, message: "Timed out: the stream did not start (nothing happened in \(seconds) s).")
    }
}

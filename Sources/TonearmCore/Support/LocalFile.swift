import Glibc
import RawPaths

/// The checks a local file passes before anything decodes it, cheapest first so that the error is the clearest one:
/// it is there, is a regular file, can be read, and (a WAV or AIFF) is not cut short.
public enum LocalFile {
    /// Throws `TonearmError` (NoSuchFile, NotAFile, NotReadable, Truncated) saying what is wrong with `file`; `doing`
    /// names what could not be done ("play", "draw").
    public static func check(_ file: RawPath, doing: String) throws {
        let path = file.string
        var info = stat()
        guard file.withCString({ stat($0, &info) }) == 0 else { throw TonearmError.noSuchFile(path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw TonearmError.notAFile(path) }
        guard file.withCString({ access($0, R_OK) }) == 0 else { throw TonearmError.notReadable(path) }
        // GStreamer plays a cut-off WAV or AIFF as a shorter file without a word; its header tells.
        if let reason = Truncation.reason(file) { throw TonearmError(.truncated, "cannot \(doing) \(path): \(reason)") }
    }
}

import Foundation
import RawPaths
import Logging
import Waveform

/// Waveform peaks of local files for the bus face: decoded once (off the cooperative pool, one file at a time) at a
/// fine fixed resolution, cached by content, then resampled to any width. Two calls for the same content share one
/// decode.
public actor WaveformService {
    /// The fine resolution kept in the cache: frames per min/max pair (audiowaveform's default zoom).
    public static let samplesPerPixel = 256
    /// The widest waveform the bus hands out (0 asks for the fine peaks themselves).
    public static let maximumWidth = 100_000

    let media: any MediaOperations
    let cache: WaveformCache
    let timeout: Duration
    let logger: Logger
    private var running: [String: Task<WaveformPeaks, any Error>] = [:]
    /// Files decoded so far (cache misses), for tests and logs.
    public private(set) var decodes = 0

    /// Decoding is on one serial queue: a request for many files never starts many decoders at once.
    static let queue = DispatchQueue(label: "tonearm.waveform")

    /// A service decoding through `media`, caching in `folder`, giving up on a file after `timeout`.
    public init(media: any MediaOperations, folder: URL, timeout: Duration = .seconds(60),
                logger: Logger = Logger(label: "tonearm.waveform")) {
        self.media = media
        cache = WaveformCache(folder: folder)
        self.timeout = timeout
        self.logger = logger
    }

    /// The peaks of `target` at `width` pixels (0: the fine peaks): "" is the current track, then a track id, a
    /// file:// URI or an absolute path. Throws `TonearmError` (NoSuchTrack, NothingPlaying, NoSuchFile, NotReadable,
    /// NotAFile, UnsupportedScheme, Truncated, CannotDecode, TimedOut, InvalidValue).
    public func peaks(target: String, width: Int, player: Player) async throws -> WaveformPeaks {
        guard width >= 0, width <= Self.maximumWidth else {
            throw TonearmError.invalidValue("width must be 0 (full resolution) to \(Self.maximumWidth), not \(width)")
        }
        let path = try await Self.file(for: target, player: player)
        return try await peaks(file: path).resampled(width: width)
    }

    /// The fine peaks of the local file at `file`, from the cache when its content was seen before.
    public func peaks(file: RawPath) async throws -> WaveformPeaks {
        try LocalFile.check(file, doing: "draw")
        let cache = self.cache
        let path = file.string
        guard let key = try await Self.queue.run({ WaveformCache.contentKey(path: file) }) else {
            throw TonearmError.notReadable(path)
        }
        if let task = running[key] { return try await task.value }
        let task = Task<WaveformPeaks, any Error> { [media, timeout, logger] in
            if let cached = try await Self.queue.run({ cache.load(key) }) { return cached }
            decodes += 1
            let uri = file.uri
            let started = ContinuousClock.now
            let peaks: WaveformPeaks
            do {
                peaks = try await Self.queue.run {
                    try media.waveform(uri: uri, samplesPerPixel: Self.samplesPerPixel, timeout: timeout)
                }
            } catch let error as MediaError {
                throw Self.error(error, path: path)
            }
            logger.debug("waveform of \(path): \(peaks.frames) frames in \(ContinuousClock.now - started)")
            do {
                try await Self.queue.run { try cache.store(peaks, key: key) }
            } catch {
                logger.warning("cannot cache the waveform of \(path) in \(cache.folder.path): \(error)")
            }
            return peaks
        }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }

    /// The local file a target names.
    static func file(for target: String, player: Player) async throws -> RawPath {
        let published = player.state.snapshot
        if target.isEmpty {
            guard let current = published.current else {
                throw TonearmError(.nothingPlaying, "no current track: name a track id, a file URI or a path")
            }
            return try localPath(current.uri)
        }
        if target.hasPrefix(TrackID.prefix) || target == TrackID.noTrack.path {
            let id = TrackID(path: target)
            guard let track = published.tracks.first(where: { $0.id == id }) else { throw TonearmError.noSuchTrack(target) }
            return try localPath(track.uri)
        }
        return try localPath(target)
    }

    /// The path of a file:// URI (its bytes: a name need not be UTF-8) or an absolute path; other schemes are refused
    /// (a stream has no end to draw).
    static func localPath(_ uri: String) throws -> RawPath {
        if uri.hasPrefix("/") { return RawPath(uri) }
        guard let url = URL(string: uri), url.isFileURL else {
            if uri.hasPrefix("file:") { throw TonearmError(.invalidUri, "not a valid file URI: \(uri)") }
            throw TonearmError.unsupportedScheme(uri)
        }
        guard let path = RawPath(fileURL: url) else { throw TonearmError(.invalidUri, "not a valid file URI: \(uri)") }
        return path
    }

    /// A decoder's error as one a person can act on.
    static func error(_ error: MediaError, path: String) -> TonearmError {
        switch (error.domain, error.code) {
        case ("resource", 3): return .noSuchFile(path)
        case ("resource", 6): return .notReadable(path)
        case ("core", 0) where error.message.hasPrefix("decoding took longer"):
            return TonearmError(.timedOut, "gave up on \(path): \(error.message)")
        case ("stream", _), ("core", 12):
            return TonearmError(.cannotDecode, "cannot decode \(path): \(error.message)")
        default:
            return TonearmError(.waveformFailed, "cannot draw \(path): \(error.message)")
        }
    }
}

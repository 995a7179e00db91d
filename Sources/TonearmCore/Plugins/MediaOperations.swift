import Foundation
import Playback
import Synchronization
import Waveform

/// The media operations a plugin may use without seeing the pipeline: probe, decode check, typefind, export, and
/// what this machine can decode. The daemon hands plugins an implementation (`GStreamerMedia`); the blocking
/// ones are to be run off the cooperative pool.
public protocol MediaOperations: Sendable {
    /// Length and tags of `uri` without playing it; throws `MediaError` when it cannot be read, is corrupt, has no
    /// audio stream, or takes longer than `timeout`. Blocking.
    func probe(uri: String, timeout: Duration) throws(MediaError) -> ProbedMedia
    /// Decodes all of `uri` as fast as it goes (a truncated file stops short or fails) and returns the length
    /// decoded, in ns. Blocking.
    func decodedLength(uri: String, timeout: Duration) throws(MediaError) -> Int64
    /// The media type the typefinders give the first bytes of the file at `path` ("audio/midi"), if any.
    func typefind(path: String) -> String?
    /// How a passthrough export of the file at `path` would be written (its extension), or why it cannot be.
    /// Blocking.
    func passthroughPlan(file path: String) throws(MediaError) -> ExportPlan
    /// Writes the file at `source` to `destination` in `mode`; `progress` gets 0…1 now and then, on this thread.
    /// `plan`: the passthrough plan when already made. On failure or cancellation `destination` may hold a partial
    /// file. Blocking.
    func export(source: String, destination: String, mode: ExportMode, plan: ExportPlan?, cancellation: ExportCancellation,
                progress: (Double) -> Void) throws(MediaError)
    /// Decodes all of `uri` and bins it into min/max peaks of `samplesPerPixel` frames, all channels folded (counted
    /// in decoded frames, never from a reported duration); throws `MediaError` when it cannot be read or decoded, or
    /// takes longer than `timeout`. Blocking.
    func waveform(uri: String, samplesPerPixel: Int, timeout: Duration) throws(MediaError) -> WaveformPeaks
    /// The MIME types this machine can decode, sorted.
    func supportedMimeTypes() -> [String]
    /// Whether the media framework here has an element named `name` ("fluiddec").
    func hasElement(_ name: String) -> Bool
    /// Measures the EBU R128 loudness and peak of `uris` one after another, and of all of them together (an album).
    /// Held while `control` says pause, stopped when it is cancelled. Blocking.
    func measureLoudness(uris: [String], control: MeasurementControl) -> LoudnessGroup
}

/// A file's (or an album's) measured loudness: integrated LUFS (nil when silent), linear peak, seconds.
public typealias MeasuredLoudness = LoudnessResult
/// Each file's measurement or failure, and the album's.
public typealias LoudnessGroup = LoudnessMeter.Group

/// Holds a running measurement while `pauseWhile` says so (a track is starting), and stops it when cancelled.
public final class MeasurementControl: Sendable {
    private let pauseWhile: @Sendable () -> Bool
    private let flag = Atomic<Bool>(false)

    /// A control that pauses while `pauseWhile` answers true.
    public init(pauseWhile: @escaping @Sendable () -> Bool = { false }) { self.pauseWhile = pauseWhile }

    /// Asks the measurement to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }
    /// Whether `cancel` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
    /// Whether the measurement should hold now.
    public var shouldPause: Bool { pauseWhile() }
}

/// Why a media operation failed, as the media framework put it: `domain` ("stream", "resource", "core" or "library")
/// and the framework's `code` within it (resource 3 = not found, stream 4 = could not determine type). The same value
/// the engine reports, named here so plugins need not import Playback.
public typealias MediaError = PlaybackError

/// What a probe read: the length and the tags.
public struct ProbedMedia: Sendable, Equatable {
    /// Length in ns; nil when the file does not tell.
    public var duration: Int64?
    /// The tags found in the stream.
    public var tags: MediaTags

    /// A probe result with these fields.
    public init(duration: Int64?, tags: MediaTags) {
        self.duration = duration
        self.tags = tags
    }
}

/// Tags read from a media file (the same value the engine reports for a stream).
public typealias MediaTags = StreamTags

/// What an export writes (passthrough, or re-encoded to a format).
public typealias ExportMode = MediaExport.Mode

/// Transcode targets, by file extension.
public typealias ExportFormat = MediaExport.Format

/// How a passthrough export is written: the file extension, and the implementation's own recipe.
public struct ExportPlan: Sendable, Equatable {
    /// The extension of the written file ("mp3", "m4a", "wav"…).
    public var fileExtension: String
    /// How the implementation writes it (for GStreamer: the elements after parsebin).
    public var recipe: String

    /// A plan with these fields.
    public init(fileExtension: String, recipe: String) {
        self.fileExtension = fileExtension
        self.recipe = recipe
    }
}

/// Something that says stop to a running export: set it from any thread.
public final class ExportCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Not cancelled.
    public init() {}

    /// Asks the export to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Whether `cancel` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

extension TrackMetadata {
    /// Fills fields from a file's tags, keeping what the tags do not say.
    public func merging(_ tags: MediaTags, artCache: ArtCache) -> TrackMetadata {
        var out = self
        if let t = tags.title, !t.isEmpty { out.title = t }
        if !tags.artists.isEmpty { out.artists = tags.artists }
        if let a = tags.album, !a.isEmpty { out.album = a }
        if !tags.albumArtists.isEmpty { out.albumArtists = tags.albumArtists }
        if let n = tags.trackNumber { out.trackNumber = n }
        if let n = tags.discNumber { out.discNumber = n }
        if !tags.genres.isEmpty { out.genres = tags.genres }
        if let image = tags.image, !image.isEmpty, let art = try? artCache.store(image) {
            out.artUrl = art.absoluteString
        }
        return out
    }
}

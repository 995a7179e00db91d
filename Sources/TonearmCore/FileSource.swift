import Foundation
import Playback

/// The plain source: local files by path or file:// URI.
public struct FileSource: SourcePlugin {
    public let name = "file"
    let artCache: ArtCache

    public init(artCache: ArtCache) { self.artCache = artCache }

    public func canResolve(_ uri: URL) -> Bool { uri.isFileURL }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        let path = uri.path
        var info = stat()
        guard stat(path, &info) == 0 else { throw TonearmError.noSuchFile(path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw TonearmError.notAFile(path) }
        guard access(path, R_OK) == 0 else { throw TonearmError.notReadable(path) }
        // GStreamer plays a cut-off WAV or AIFF as a shorter file without a word; its header tells.
        if let reason = Truncation.reason(path) { throw TonearmError("Truncated", "cannot play \(path): \(reason)") }
        let name = uri.deletingPathExtension().lastPathComponent
        return TrackMetadata(url: uri.absoluteString, title: name)
    }

    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata {
        let uri = metadata.url
        let probed = try? await FileSource.probeQueue.run { try MediaProbe.probe(uri: uri) }
        guard let probed else { return metadata }
        var out = metadata.merging(probed.tags, artCache: artCache)
        if let ns = probed.duration, ns > 0 { out.length = ns / 1000 }
        return out
    }

    public func verify(_ uri: URL) async throws {
        do {
            _ = try await FileSource.probeQueue.run { try MediaProbe.probe(uri: uri.absoluteString) }
        } catch {
            let reason = (error as? PlaybackError)?.message ?? "\(error)"
            throw TonearmError("UnsupportedType", "not a playable audio file: \(uri.path) (\(reason))")
        }
    }

    /// Discoverer runs block; one serial queue keeps them off the cooperative pool.
    static let probeQueue = DispatchQueue(label: "tonearm.probe")
}

extension TrackMetadata {
    /// Fills fields from stream tags, keeping what the tags do not say.
    public func merging(_ tags: StreamTags, artCache: ArtCache) -> TrackMetadata {
        merging(MediaTags(tags), artCache: artCache)
    }
}

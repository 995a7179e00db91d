import Foundation
import Playback
import RawPaths

/// The plain source: local files by path or file:// URI.
public struct FileSource: SourcePlugin {
    public let name = "file"
    let artCache: ArtCache
    /// Reads a file's tags now (TagLib, milliseconds), so the track shows its title, artist and length at once; the
    /// discoverer's exact figures follow in `enrich`.
    let quickTags: (@Sendable (TrackMetadata) async -> TrackMetadata)?

    public init(artCache: ArtCache, quickTags: (@Sendable (TrackMetadata) async -> TrackMetadata)? = nil) {
        self.artCache = artCache
        self.quickTags = quickTags
    }

    public func canResolve(_ uri: URL) -> Bool { uri.isFileURL }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        // The URI's own bytes: a name that is not UTF-8 (Latin-1, from an old rip) has no `URL.path`.
        guard let file = RawPath(fileURL: uri) else { throw TonearmError(.invalidUri, "not a valid file URI: \(uri.absoluteString)") }
        try LocalFile.check(file, doing: "play")
        let name = file.stem
        let plain = TrackMetadata(url: uri.absoluteString, title: name)
        guard let quickTags else { return plain }
        var tagged = await quickTags(plain)
        if tagged.title?.isEmpty ?? true { tagged.title = name }
        return tagged
    }

    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata {
        let uri = metadata.url
        // In the background: a loaded machine may take long, and nothing waits for it.
        let probed = try? await FileSource.probeQueue.run { try MediaProbe.probe(uri: uri, timeout: .seconds(30)) }
        guard let probed else { return metadata }
        var out = metadata.merging(probed.tags, artCache: artCache)
        if let ns = probed.duration, ns > 0 { out.length = ns / 1000 }
        return out
    }

    /// By content, in milliseconds: readable, and its first 64 KiB look like audio (a file that then fails to decode
    /// is skipped with TrackFailed). Off the probe queue, so an OpenUri never waits behind the enrichment of a batch.
    public func verify(_ uri: URL) async throws {
        let problem = try await FileSource.checkQueue.run { MediaPrecheck.check(uri.absoluteString, typefind: true) }
        if let problem {
            let path = RawPath(fileURL: uri)?.string ?? uri.absoluteString
            throw TonearmError(.unsupportedType, "not a playable audio file: \(path) (\(problem.message))")
        }
    }

    /// Discoverer runs block; one serial queue keeps them off the cooperative pool.
    static let probeQueue = DispatchQueue(label: "tonearm.probe")
    /// Content checks for OpenUri: short, and never behind the probes.
    static let checkQueue = DispatchQueue(label: "tonearm.check", attributes: .concurrent)
}

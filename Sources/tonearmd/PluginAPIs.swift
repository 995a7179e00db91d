import Foundation
import LocalLibrary
import MPRIS
import ReceivedShares

// The plugins' Swift APIs as the bus face asks for them: the daemon is the one part that sees both.

extension LocalLibrary: LibraryAPI {
    public func search(query: String, offset: Int, limit: Int) async throws -> [LibraryTrack] {
        try await search(SearchPredicate.parse(query), offset: offset, limit: limit)
    }

    public func rescan() async throws {
        _ = try await scan()
    }

    public func loudnessCounts() async throws -> (tagged: Int, measured: Int, pending: Int, failed: Int, running: Bool) {
        let s = try await loudnessStatus()
        return (s.tagged, s.measured, s.pending, s.failed, s.running)
    }

    public func writeMeasuredGains() async throws -> (written: Int, failures: [ScanFailure]) {
        let report = try await writeLoudnessTags()
        return (report.written, report.failures)
    }
}

extension ArtistSummary: LibraryArtistRecord {}
extension AlbumSummary: LibraryAlbumRecord {}
extension LibraryTrack: LibraryTrackRecord {}
extension ScanFailure: LibraryProblemRecord {}

extension LibraryEvent: LibraryEventRecord {
    public var scanSignal: LibraryScanSignal? {
        switch self {
        case .scanProgress(let done, let total): .progress(done: done, total: total)
        case .scanFinished(let s): .finished(added: s.added, updated: s.updated, removed: s.removed, failed: s.failed)
        case .changed: nil
        }
    }
}

extension ReceivedShares: SharesAPI {
    public var inboxes: [URL] { settings.inboxes }
}

extension ShareEvent: ShareEventRecord {
    public var shareSignal: ShareSignal {
        switch self {
        case .received(let uri, let metadata): .received(uri: uri, metadata: metadata)
        case .rejected(let path, let reason): .rejected(path: path, reason: reason)
        case .exportProgress(let id, let fraction): .exportProgress(id: id, fraction: fraction)
        case .exportFinished(let id, let path, let error): .exportFinished(id: id, path: path, error: error)
        }
    }
}

import Foundation
import LocalLibrary
import MPRIS
import TonearmCore
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

    public func pendingShareOffers() async -> [PendingShareOffer] {
        await pendingOffers().map {
            PendingShareOffer(id: $0.id, sender: $0.sender.name, address: $0.sender.address, fingerprint: $0.sender.fingerprint,
                              files: $0.files.map(\.name), sizes: $0.files.map(\.size))
        }
    }
}

extension ShareEvent: ShareEventRecord {
    public var shareSignal: ShareSignal {
        switch self {
        case .received(let uri, let metadata): .received(uri: uri, metadata: metadata)
        case .rejected(let path, let reason): .rejected(path: path, reason: reason)
        case .exportProgress(let id, let fraction): .exportProgress(id: id, fraction: fraction)
        case .exportFinished(let id, let path, let error): .exportFinished(id: id, path: path, error: error)
        case .offered(let o):
            .offered(PendingShareOffer(id: o.id, sender: o.sender.name, address: o.sender.address, fingerprint: o.sender.fingerprint,
                                       files: o.files.map(\.name), sizes: o.files.map(\.size)))
        case .offerClosed(let id): .offerClosed(id: id)
        case .fromDevice(let sender, let fileName, let uri, let reason):
            .fromDevice(sender: sender.name, address: sender.address, fingerprint: sender.fingerprint, fileName: fileName, uri: uri, reason: reason)
        }
    }
}

import Foundation
import RawPaths
import GRDB

extension LocalLibrary {
    /// What the index holds for a file: enough to tell whether it changed.
    struct Known: Sendable {
        var size: Int
        var mtime: Int64
        var signature: String
    }

    /// Rescans only `scopes` (folders inside the music folders, recursively); nil means everything.
    /// Runs on the scan queue; the folders walked are watched afterwards when a watcher runs.
    ///
    /// The walk and the comparison with the index are all an unchanged library costs. New and changed files are
    /// read on threads of their own (`ReadAhead`) while this thread writes what was read, a batch per transaction.
    func performScan(scopes: [RawPath]?) throws -> (summary: ScanSummary, folders: [RawPath]) {
        scansRunning.add(1, ordering: .relaxed)
        defer { scansRunning.subtract(1, ordering: .relaxed) }
        let started = ContinuousClock.now
        let pairs = scanPairs(scopes)
        var walk = WalkResult()
        walk.excluded = excluded
        for (root, musicFolder) in pairs {
            if root == musicFolder, Walker.identity(root) == nil {
                logger.warning("music folder not found or not a folder: \(root.string)")
            }
            Walker.walk(root, musicFolder: musicFolder, into: &walk)
        }

        let (knownTracks, knownFailures, generation) = try loadKnown(pairs.map(\.root))

        var summary = ScanSummary()
        var seen = Set<String>(minimumCapacity: walk.files.count)
        var toRead: [FoundFile] = []
        for file in walk.files {
            guard seen.insert(file.uri).inserted else { continue }
            if let known = knownTracks[file.uri], known.size == file.size, known.mtime == file.mtime,
               known.signature == (file.folderImage?.signature ?? "") { continue }
            if let known = knownFailures[file.uri], known.size == file.size, known.mtime == file.mtime {
                summary.failed += 1
                continue
            }
            toRead.append(file)
        }
        let walkFailures = walk.failures.map { (uri: $0.0.uri, path: $0.0.string, reason: $0.1) }
        let walkFailureURIs = Set(walkFailures.map(\.uri))

        let total = toRead.count
        emit(.scanProgress(done: 0, total: total))
        var lastProgress = ContinuousClock.now
        var folderArt: [RawPath: String?] = [:]
        var writer = IndexWriter(generation: generation)
        // Twice the cores: reads also wait for the disk. The window holds a few batches, so the readers go on
        // while a batch is written; results hold no picture bytes (ReadAhead stores those), so it stays small.
        let batchSize = 256
        let reader = ReadAhead(files: toRead, workers: max(2, min(8, ProcessInfo.processInfo.activeProcessorCount * 2)),
                               window: batchSize * 4, artCache: artCache)
        defer { reader.stop() }
        var done = 0
        while done < total {
            let end = min(total, done + batchSize)
            var rows: [(file: FoundFile, outcome: TagReader.Outcome, art: String?)] = []
            rows.reserveCapacity(end - done)
            for i in done..<end {
                let file = toRead[i]
                let result = reader.result(i)
                var art: String?
                if case .tags = result.outcome {
                    if let embedded = result.embeddedArt {
                        art = embedded
                    } else if let image = file.folderImage {
                        if let cached = folderArt[image.path] {
                            art = cached
                        } else {
                            let stored = storeFolderImage(image)
                            folderArt[image.path] = stored
                            art = stored
                        }
                    }
                }
                rows.append((file, result.outcome, art))
            }
            try database.write { db in
                for (file, outcome, art) in rows {
                    let exists = knownTracks[file.uri] != nil
                    switch outcome {
                    case .tags(let tags):
                        try writer.writeTrack(db, file: file, tags: tags, artUrl: art, exists: exists,
                                              hadFailure: knownFailures[file.uri] != nil)
                    case .failure(let reason):
                        try writer.writeFailure(db, file: file, reason: reason, exists: exists)
                    }
                }
            }
            for (file, outcome, _) in rows {
                let known = knownTracks[file.uri] != nil
                switch outcome {
                case .tags: if known { summary.updated += 1 } else { summary.added += 1 }
                case .failure: summary.failed += 1; if known { summary.removed += 1 }
                }
            }
            done = end
            let now = ContinuousClock.now
            if now - lastProgress >= .milliseconds(100) || done == total {
                lastProgress = now
                emit(.scanProgress(done: done, total: total))
            }
        }

        // Vanished files, and failures that no longer apply.
        let vanished = knownTracks.keys.filter { !seen.contains($0) }
        let staleFailures = knownFailures.keys.filter { !seen.contains($0) && !walkFailureURIs.contains($0) }
        if !vanished.isEmpty || !staleFailures.isEmpty || !walkFailures.isEmpty {
            try database.write { db in
                for uri in vanished { try writer.deleteTrack(db, uri: uri) }
                for uri in staleFailures { try writer.deleteFailure(db, uri: uri) }
                for failure in walkFailures {
                    try writer.recordFailure(db, uri: failure.uri, path: failure.path, reason: failure.reason, size: 0, mtime: 0)
                }
            }
        }
        summary.removed += vanished.count
        summary.failed += walkFailures.count

        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        logger.info("library scan: \(walk.files.count) files seen, \(total) read in \(String(format: "%.2f", seconds)) s; added \(summary.added), updated \(summary.updated), removed \(summary.removed), failed \(summary.failed)")
        emit(.scanFinished(summary))
        if summary.added + summary.updated + summary.removed > 0 || !staleFailures.isEmpty || total > 0 { emit(.changed) }
        return (summary, walk.folders)
    }

    /// The folders to walk, each with the music folder it lies in: every music folder, or the `scopes` that lie in
    /// one (a scope inside another is walked with it).
    private func scanPairs(_ scopes: [RawPath]?) -> [(root: RawPath, musicFolder: RawPath)] {
        guard let scopes else { return roots.map { ($0, $0) } }
        var pairs: [(root: RawPath, musicFolder: RawPath)] = []
        for scope in scopes.sorted(by: { $0.bytes.count < $1.bytes.count }) {
            guard let musicFolder = roots.first(where: { scope.isWithin($0) }) else { continue }
            if pairs.contains(where: { scope.isWithin($0.root) }) { continue }
            pairs.append((scope, musicFolder))
        }
        return pairs
    }

    /// The indexed tracks and recorded failures under `scopeRoots`, by URI, and this scan's generation number
    /// (stored at once, in the same transaction).
    private func loadKnown(_ scopeRoots: [RawPath]) throws -> ([String: Known], [String: Known], Int) {
        try database.write { db -> ([String: Known], [String: Known], Int) in
            var tracks: [String: Known] = [:]
            var failures: [String: Known] = [:]
            for root in scopeRoots {
                let rows = try Row.fetchCursor(db, sql: "SELECT uri, size, mtime, art_signature FROM tracks WHERE \(Index.withinClause)",
                                               arguments: Index.withinArguments(root))
                while let row = try rows.next() {
                    tracks[row[0]] = Known(size: row[1], mtime: row[2], signature: row[3])
                }
                let failed = try Row.fetchCursor(db, sql: "SELECT uri, size, mtime FROM failures WHERE \(Index.withinClause)",
                                                 arguments: Index.withinArguments(root))
                while let row = try failed.next() {
                    failures[row[0]] = Known(size: row[1], mtime: row[2], signature: "")
                }
            }
            let generation = (try Int.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'generation'") ?? 0) + 1
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)", arguments: [generation])
            return (tracks, failures, generation)
        }
    }

    private func storeFolderImage(_ image: FolderImage) -> String? {
        let fd = image.path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let bytes = FileBytes(fd: fd, size: min(image.size, 64 << 20)).read(0, min(image.size, 64 << 20))
        guard !bytes.isEmpty else { return nil }
        do {
            return try artCache.store(bytes).absoluteString
        } catch {
            logger.warning("cannot store cover art from \(image.path.string): \(error)")
            return nil
        }
    }
}

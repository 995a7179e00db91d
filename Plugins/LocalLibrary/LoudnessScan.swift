import Foundation
import GRDB
import TagFields
import TonearmCore

/// How far the loudness measurement has come: tracks by state.
public struct LoudnessStatus: Sendable, Codable, Equatable {
    /// Tracks whose tags carry a track gain (nothing to measure).
    public var tagged: Int
    /// Tracks measured by Tonearm.
    public var measured: Int
    /// Tracks waiting to be measured.
    public var pending: Int
    /// Tracks that could not be measured (the reason is kept in the index).
    public var failed: Int
    /// Whether the measurement runs now.
    public var running: Bool

    public init(tagged: Int, measured: Int, pending: Int, failed: Int, running: Bool) {
        self.tagged = tagged
        self.measured = measured
        self.pending = pending
        self.failed = failed
        self.running = running
    }
}

/// What `writeLoudnessTags` did.
public struct LoudnessTagReport: Sendable, Codable, Equatable {
    public var written: Int
    public var failures: [ScanFailure]

    public init(written: Int, failures: [ScanFailure]) {
        self.written = written
        self.failures = failures
    }
}

/// ReplayGain for files without gain tags: measured in the background after each scan, an album at a time, and kept
/// in the index (never in the files, unless `writeLoudnessTags` is asked for).
extension LocalLibrary {
    /// What the background measurement uses; set by `start(_:)` (or a test).
    struct Measurer: Sendable {
        var media: any MediaOperations
        var control: MeasurementControl
    }

    /// One album (or a track with no album) to measure together: the files as the index knew them when picked.
    struct MeasureUnit {
        var files: [(uri: String, size: Int, mtime: Int64)]
        var isAlbum: Bool
    }

    /// Starts measuring in the background when a measurer is set and none runs; one album at a time, on a queue of
    /// its own. The state is the index's: what is left after a restart is measured then.
    public func measureInBackground() {
        guard let measurer = measurer.withLock({ $0 }) else { return }
        guard !measuring.exchange(true, ordering: .acquiringAndReleasing) else {
            measureAgain.store(true, ordering: .relaxed)
            return
        }
        measureQueue.async { [weak self] in
            guard let self else { return }
            repeat {
                measureAgain.store(false, ordering: .relaxed)
                do {
                    let count = try measurePending(using: measurer.media, control: measurer.control)
                    if count > 0 { logger.info("loudness: measured \(count) tracks") }
                } catch {
                    logger.error("loudness measurement stopped: \(error)")
                }
            } while measureAgain.load(ordering: .relaxed) && !measurer.control.isCancelled
            measuring.store(false, ordering: .releasing)
        }
    }

    /// Measures every track still waiting, an album at a time; returns how many tracks were measured. Blocking.
    @discardableResult
    public func measurePending(using media: any MediaOperations, control: MeasurementControl = MeasurementControl()) throws -> Int {
        var count = 0
        var skipped: Set<String> = []
        while !control.isCancelled, let unit = try nextUnit(excluding: skipped) {
            let group = media.measureLoudness(uris: unit.files.map(\.uri), control: control)
            if control.isCancelled { break }
            try database.write { db in
                for (file, result) in zip(unit.files, group.tracks) {
                    switch result {
                    case .success(let r):
                        try db.execute(sql: """
                            UPDATE tracks SET loudness = ?, peak = ?, album_loudness = ?, album_peak = ?, loudness_error = NULL,
                                loudness_state = CASE loudness_state WHEN 3 THEN 3 ELSE 1 END
                            WHERE uri = ? AND size = ? AND mtime = ?
                            """, arguments: [r.loudness, r.peak, unit.isAlbum ? group.album?.loudness : nil,
                                             unit.isAlbum ? group.album?.peak : nil, file.uri, file.size, file.mtime])
                        count += 1
                    case .failure(let e):
                        try db.execute(sql: """
                            UPDATE tracks SET loudness_error = ?, loudness_state = CASE loudness_state WHEN 3 THEN 3 ELSE 2 END
                            WHERE uri = ? AND size = ? AND mtime = ?
                            """, arguments: [e.message, file.uri, file.size, file.mtime])
                    }
                }
            }
            // A file that changed while it was measured stays pending for the next round, not for this one.
            skipped.formUnion(unit.files.map(\.uri))
        }
        if count > 0 { emit(.changed) }
        return count
    }

    /// The album (same album and album artist) of the first track waiting, all its tracks (tagged ones too: the
    /// album's loudness needs them); a track without an album alone.
    private func nextUnit(excluding skipped: Set<String>) throws -> MeasureUnit? {
        try database.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT uri, album_key, album_artist_key FROM tracks WHERE loudness_state = 0 ORDER BY path_key")
            while let row = try rows.next() {
                let uri: String = row["uri"]
                guard !skipped.contains(uri) else { continue }
                let albumKey: String = row["album_key"]
                let files: [Row]
                if albumKey.isEmpty {
                    files = try Row.fetchAll(db, sql: "SELECT uri, size, mtime FROM tracks WHERE uri = ?", arguments: [uri])
                } else {
                    files = try Row.fetchAll(db, sql: """
                        SELECT uri, size, mtime FROM tracks WHERE album_key = ? AND album_artist_key = ? ORDER BY \(Self.trackOrder)
                        """, arguments: [albumKey, row["album_artist_key"] as String])
                }
                return MeasureUnit(files: files.map { ($0["uri"], $0["size"], $0["mtime"]) }, isAlbum: !albumKey.isEmpty)
            }
            return nil
        }
    }

    /// Tracks by measurement state.
    public func loudnessStatus() async throws -> LoudnessStatus {
        let running = measuring.load(ordering: .relaxed)
        return try await database.read { db in
            var counts: [Int: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT loudness_state, COUNT(*) AS n FROM tracks GROUP BY loudness_state") {
                counts[row["loudness_state"]] = row["n"]
            }
            return LoudnessStatus(tagged: counts[Index.LoudnessState.tagged.rawValue] ?? 0,
                                  measured: counts[Index.LoudnessState.measured.rawValue] ?? 0,
                                  pending: counts[Index.LoudnessState.pending.rawValue] ?? 0,
                                  failed: counts[Index.LoudnessState.failed.rawValue] ?? 0, running: running)
        }
    }

    /// Writes the measured gains into the files as REPLAYGAIN_TRACK/ALBUM_GAIN and _PEAK tags (what loudgain writes),
    /// only when asked (`tonearm library loudness --write-tags`). The next scan reads them back as tags.
    public func writeLoudnessTags() async throws -> LoudnessTagReport {
        let rows = try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT path, loudness, peak, album_loudness, album_peak FROM tracks WHERE loudness_state = 1 AND loudness IS NOT NULL ORDER BY path_key").map { row in
                let loudness: Double? = row["loudness"]
                let albumLoudness: Double? = row["album_loudness"]
                return (path: row["path"] as String,
                        gains: TrackLoudness(trackGain: loudness.map(TrackLoudness.gain(forLoudness:)), trackPeak: row["peak"],
                                             albumGain: albumLoudness.map(TrackLoudness.gain(forLoudness:)), albumPeak: row["album_peak"],
                                             source: .measured))
            }
        }
        return try await readQueue.run {
            var written = 0
            var failures: [ScanFailure] = []
            for (path, gains) in rows {
                do throws(TagFields.Failure) {
                    try TagFields.write(path, gains.tagFields)
                    written += 1
                } catch .unreadable {
                    failures.append(ScanFailure(path: path, reason: "cannot open its tags"))
                } catch {
                    failures.append(ScanFailure(path: path, reason: "cannot save its tags (read-only file or folder?)"))
                }
            }
            return LoudnessTagReport(written: written, failures: failures)
        }
    }
}

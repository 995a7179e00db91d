import DBus
import Foundation
import Synchronization
import TestSupport

/// The generated music folder for the library-scan figures: a few distinct tiny tagged files
/// (FLAC and Ogg Vorbis, encoded once with gst-launch), copied into `Artist/Album/NN Title.ext`
/// folders under varied names. Tags repeat between copies; the scanners read every file anyway.
enum ScanLibrary {
    static let tracksPerAlbum = 10
    static let albumsPerArtist = 10

    /// Writes `count` files into `folder`; returns their total size in bytes.
    static func generate(count: Int, in folder: URL, scratch: URL) async throws -> Int {
        let tagSets: [[(String, String)]] = [
            [("title", "Morning Light"), ("artist", "Ada Lind"), ("album", "First Songs"), ("genre", "Folk"), ("track-number", "1")],
            [("title", "Über den Wolken"), ("artist", "Jörg Weiß"), ("album", "Höhenflug"), ("genre", "Pop"), ("track-number", "2")],
            [("title", "Slow River"), ("artist", "The Quiet Ones"), ("album", "Night Drive"), ("genre", "Rock"), ("track-number", "3")],
            [("title", "Café Noir"), ("artist", "Élodie Marchand"), ("album", "Rive Gauche"), ("genre", "Jazz"), ("track-number", "4")],
        ]
        var sources: [URL] = []
        for (format, encoder) in [("flac", ["flacenc"]), ("ogg", ["vorbisenc", "!", "oggmux"])] {
            for (i, tags) in tagSets.enumerated() {
                let url = scratch.appendingPathComponent("source-\(i).\(format)")
                try await encode(tags: tags, encoder: encoder, to: url)
                sources.append(url)
            }
        }
        let fm = FileManager.default
        var bytes = 0
        for i in 0..<count {
            let album = i / tracksPerAlbum, artist = album / albumsPerArtist, track = i % tracksPerAlbum + 1
            let source = sources[(i * 7 + album) % sources.count]
            let dir = folder.appendingPathComponent(artistName(artist))
                .appendingPathComponent(String(format: "%@ (%d)", albumName(album), 1960 + album % 60))
            if track == 1 { try fm.createDirectory(at: dir, withIntermediateDirectories: true) }
            let name = String(format: "%02d %@.%@", track, trackTitle(i), source.pathExtension)
            try fm.copyItem(at: source, to: dir.appendingPathComponent(name))
            bytes += (try? fm.attributesOfItem(atPath: source.path)[.size] as? Int) ?? 0
        }
        return bytes
    }

    private static let words = ["Blue", "Silver", "Velvet", "Northern", "Électrique", "Quiet", "Golden", "Wild",
                                "Ночной", "Paper", "Broken", "Crystal", "Distant", "Lonely", "東京", "Electric"]
    private static let nouns = ["Harbour", "Orchestra", "Machines", "Gardens", "Sisters", "Engines", "Lights", "Ensemble",
                                "Parade", "Foxes", "Trio", "Kollektiv", "Choir", "Sound System", "Quartet", "Band"]

    static func artistName(_ i: Int) -> String {
        "\(words[i % words.count]) \(nouns[(i / words.count + i) % nouns.count]) \(i)"
    }

    static func albumName(_ i: Int) -> String {
        "\(nouns[(i * 5) % nouns.count]) of \(words[(i * 3 + 1) % words.count]) \(i)"
    }

    static func trackTitle(_ i: Int) -> String {
        "\(words[(i * 11) % words.count]) \(nouns[(i * 13 + 2) % nouns.count]) – take \(i % 97)"
    }

    /// About 0.23 s of sine (10 × 1024 samples), tagged through taginject before the encoder.
    private static func encode(tags: [(String, String)], encoder: [String], to url: URL) async throws {
        let list = tags.map { key, value in key == "track-number" ? "\(key)=(uint)\(value)" : "\(key)=\\\"\(value)\\\"" }
            .joined(separator: ",")
        let arguments = ["-q", "audiotestsrc", "num-buffers=10", "!", "audioconvert", "!", "taginject", "tags=\"\(list)\"", "!"]
            + encoder + ["!", "filesink", "location=\(url.path)"]
        let result = try await gstLaunch(arguments)
        guard result.status == 0, FileManager.default.fileExists(atPath: url.path) else {
            throw BenchError("gst-launch-1.0 could not make \(url.lastPathComponent): \(result.err)")
        }
    }
}

/// Figures of one library-scan run of one scanner.
struct ScanFigures: Sendable {
    /// Seconds until the cold scan (empty index) finished, and the warm one (nothing changed).
    var cold: Double
    var warm: Double
    /// VmHWM of the scanning process after the cold scan, kB.
    var peakKB: Double
    var note = ""
}

/// The library-scan part: tonearmd's start-up scan of the generated folder, cold and warm, beside
/// mpd's `update` of the same folder. Runs alternate between the two; each run starts from scratch.
struct ScanBench: Sendable {
    let tonearm: Player
    /// `(mpd, mpc)` executables, or nil when mpd is not measured.
    let mpd: (String, String)?
    let runs: Int
    let folder: String
    let files: Int
    let gstRegistry: String

    static let libraryInterface = "org.tonearm.Library1"
    static let timeout = Duration.seconds(900)

    /// Adds the scan metrics to `results`. A failing tonearm fails the bench; a failing mpd is reported.
    /// Run 0 is an untimed warm-up of each, so the first timed run does not pay for a cold page cache.
    func measure(into results: inout Results) async throws {
        for run in 0...runs {
            let name = run == 0 ? "warm-up (not counted)" : "run \(run)/\(runs)"
            let figures = try await tonearmRun()
            if run > 0 { record("tonearm", figures, &results) }
            log("\(name) scan tonearm: " + describe(figures))
            guard let (mpd, mpc) = mpd, results.failures["mpd-scan"] == nil else { continue }
            do {
                let figures = try await MPD.run(mpd: mpd, mpc: mpc, folder: folder, files: files, timeout: Self.timeout)
                if run > 0 { record("mpd-scan", figures, &results) }
                log("\(name) scan mpd: " + describe(figures))
            } catch {
                log("mpd could not be measured: \(error)")
                results.failures["mpd-scan"] = "\(error)".split(separator: "\n").first.map(String.init) ?? "failed"
                results.samples["mpd-scan"] = nil
            }
        }
    }

    private func record(_ label: String, _ figures: ScanFigures, _ results: inout Results) {
        let add: [Metric: Double] = [.scanCold: Double(files) / figures.cold, .scanWarm: Double(files) / figures.warm,
                                     .scanMemory: figures.peakKB / 1024]
        for (metric, value) in add { results.samples[label, default: [:]][metric, default: []].append(value) }
    }

    private func describe(_ f: ScanFigures) -> String {
        "cold \(format(f.cold * 1000)) ms (\(format(Double(files) / f.cold)) files/s), "
            + "warm \(format(f.warm * 1000)) ms (\(format(Double(files) / f.warm)) files/s), "
            + "VmHWM \(format(f.peakKB / 1024)) MB" + (f.note.isEmpty ? "" : ", " + f.note)
    }

    /// One session: the config names the folder and turns off the scan at start; once tonearmd is on the bus,
    /// Library1.Scan is asked for twice: on the empty index (cold), then with nothing changed (warm), each timed
    /// from the call to ScanFinished, as `mpc update --wait` is for mpd.
    private func tonearmRun() async throws -> ScanFigures {
        try await Session.with(gstRegistry: gstRegistry) { session in
            let env = session.environment
            let config = URL(fileURLWithPath: env["XDG_CONFIG_HOME"]!).appendingPathComponent("tonearm/config.toml")
            try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
            let quoted = folder.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            // Like `mpc update --wait` on a running mpd: the daemon is up first, then each scan is asked for.
            try "[plugins.library]\nfolders = [\"\(quoted)\"]\nscan-on-start = false\n".write(to: config, atomically: true, encoding: .utf8)
            let (startup, name) = try await session.launch(tonearm, .idle)
            guard let child = session.children.withLock({ $0.last }) else { throw BenchError("tonearmd vanished") }
            let cold = try await session.requestScan(tonearm, child, busName: name, expectAdded: files)
            let peak = VmHWM.kilobytes(of: child.pid)
            let warm = try await session.requestScan(tonearm, child, busName: name, expectAdded: 0)
            await child.terminate()
            guard let peak else { throw BenchError("cannot read VmHWM of tonearmd") }
            return ScanFigures(cold: cold.microseconds / 1e6, warm: warm.microseconds / 1e6, peakKB: peak,
                               note: "start-up to bus name \(format(startup.microseconds / 1000)) ms")
        }
    }
}

extension Session {
    /// Asks a running tonearmd for a scan (Library1.Scan, ScanFinished subscribed to first), checks the counts
    /// (`expectAdded` added, nothing updated, removed or failed) and returns the time from the call to ScanFinished.
    func requestScan(_ player: Player, _ child: ChildProcess, busName: String, expectAdded: Int) async throws -> Duration {
        let finished = try await client.subscribe(DBusMatchRule(path: Self.mprisPath, interface: ScanBench.libraryInterface,
                                                                member: "ScanFinished"))
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await client.call(destination: busName, path: Self.mprisPath, interface: ScanBench.libraryInterface, member: "Scan")
        let result = try await Self.watching(child, player, "finishing its scan", timeout: ScanBench.timeout) {
            for await signal in finished {
                return (clock.now, signal.arguments.map { $0.int64Value ?? -1 })
            }
            return nil
        }
        guard let (done, counts) = result else { throw BenchError("the bus connection closed while waiting for ScanFinished") }
        guard counts == [Int64(expectAdded), 0, 0, 0] else {
            throw BenchError("ScanFinished(added, updated, removed, failed) was \(counts), expected [\(expectAdded), 0, 0, 0]")
        }
        return done - start
    }
}

enum VmHWM {
    /// The peak resident set size ("VmHWM:  1234 kB" in /proc/PID/status), in kB.
    static func kilobytes(of pid: pid_t) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Double($0) }
    }
}

import DaemonHarness
import Foundation
import Synchronization
import TagFields
import TestSupport
import Testing

/// Scrobbling through the real daemon to a real Maloja (malojaserver, pinned in scripts/scrobble-venv) on loopback,
/// with a stand-in in front of it (scrobble/switchboard.py) that records every request and can answer 500 or hang.
/// Maloja keeps the recording, release, track and artist ids of a listen (in its database's `extra`), not the release
/// group's: that one, and "playing now" (which Maloja takes and drops), are checked in what the stand-in recorded.
@Suite(.serialized) struct ScrobblingTests {
    static let venv = SetupScript(NetworkNamespace.root.appendingPathComponent("scripts/scrobble-venv"))
    static let key = "tonearm-scrobble-test-key-0123456789"
    static let ids = (recording: "0b4a1bb5-8a4e-4f4a-9c3c-2d7d5c2d2a11", track: "1c5b2cc6-9b5f-4a5b-8d4d-3e8e6d3e3b22",
                      release: "2d6c3dd7-ac60-4b6c-9e5e-4f9f7e4f4c33", releaseGroup: "3e7d4ee8-bd71-4c7d-af6f-50a08f505d44",
                      artists: ["4f8e5ff9-ce82-4d8e-b070-61b19a616e55", "5a9f6a0a-df93-4e9f-8181-72c2ab727f66"])

    /// Maloja on a free loopback port, its data under `folder`, with `key` as the one API key it accepts.
    final class Maloja: Sendable {
        let port: Int
        let data: URL
        let python: String
        let process: ChildProcess

        init(bin: String, folder: URL) async throws {
            port = try freeLoopbackPort()
            data = folder.appendingPathComponent("maloja")
            python = bin + "/python"
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            // Maloja 3 keeps its API keys in apikeys.yml (name: key) in its config folder, here its data folder.
            try "tonearm: \(ScrobblingTests.key)\n".write(to: data.appendingPathComponent("apikeys.yml"), atomically: true, encoding: .utf8)
            var env = ProcessInfo.processInfo.environment
            env["MALOJA_DATA_DIRECTORY"] = data.path
            env["MALOJA_SKIP_SETUP"] = "yes"
            env["MALOJA_FORCE_PASSWORD"] = "tonearm-test"
            env["MALOJA_HOST"] = "127.0.0.1"
            env["MALOJA_PORT"] = String(port)
            // Niced a little: its start-up is heavy Python, and the other suites' daemons run beside it with audio to
            // keep in time. Not more: at nice 15 beside a loaded run's CPU burners it had not started in two minutes.
            process = try ChildProcess("/usr/bin/nice", ["-n", "5", bin + "/maloja", "run"], environment: env, captureOutput: false,
                                       outputFile: folder.appendingPathComponent("maloja.log").path, processGroup: true)
            let log = folder.appendingPathComponent("maloja.log")
            try await waitUntil("Maloja listening", timeout: .seconds(300), interval: .milliseconds(100),
                                detail: (try? String(contentsOf: log, encoding: .utf8)) ?? "") { [port, process] in
                !process.isRunning || acceptsConnections(loopbackPort: port)
            }
            try #require(process.isRunning, "Maloja stopped: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }

        var url: String { "http://127.0.0.1:\(port)" }

        /// Every scrobble Maloja stored: time, title, and the extra fields (the MusicBrainz ids).
        func scrobbles() async throws -> [(time: Int, title: String, extra: [String: Any])] {
            let script = """
                import json, sqlite3, sys
                c = sqlite3.connect(sys.argv[1])
                rows = c.execute('SELECT s.timestamp, t.title, s.extra FROM scrobbles s JOIN tracks t ON s.track_id = t.id ORDER BY s.timestamp')
                print(json.dumps([[r[0], r[1], json.loads(r[2] or '{}')] for r in rows]))
                """
            let (out, err, status) = try await runProcess(python, ["-c", script, data.appendingPathComponent("malojadb.sqlite").path])
            guard status == 0 else { throw TestRigError("reading Maloja's database: \(err)") }
            let rows = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[Any]] ?? []
            return rows.map { ($0[0] as? Int ?? 0, $0[1] as? String ?? "", $0[2] as? [String: Any] ?? [:]) }
        }
    }

    /// The stand-in ListenBrainz server: what it answers is set by `mode`; what it got is in `requests`.
    final class Switchboard: Sendable {
        let port: Int
        let modeFile: URL
        let logFile: URL
        let process = Mutex<ChildProcess?>(nil)
        let python: String

        init(bin: String, folder: URL, port: Int? = nil) throws {
            self.port = try port ?? freeLoopbackPort()
            modeFile = folder.appendingPathComponent("switchboard.mode")
            logFile = folder.appendingPathComponent("switchboard.jsonl")
            python = bin + "/python"
        }

        func start(_ mode: String) async throws {
            set(mode)
            let script = NetworkNamespace.root.appendingPathComponent("Tests/IntegrationTests/scrobble/switchboard.py").path
            let child = try ChildProcess("/usr/bin/nice", ["-n", "5", python, script, String(port), modeFile.path, logFile.path], captureOutput: false,
                                         outputFile: logFile.path + ".err")
            process.withLock { $0 = child }
            try await waitUntil("the switchboard listening", interval: .milliseconds(50)) { acceptsConnections(loopbackPort: port) }
        }

        func set(_ mode: String) {
            try? mode.write(to: modeFile, atomically: true, encoding: .utf8)
        }

        var url: String { "http://127.0.0.1:\(port)/apis/listenbrainz" }

        /// Every request recorded: listen type, the listens' `listened_at` and titles, the status answered (nil: hung).
        var requests: [(type: String, times: [Int], titles: [String], status: Int?, body: [String: Any], auth: String)] {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let body = entry["body"] as? [String: Any] else { return nil }
                let payload = body["payload"] as? [[String: Any]] ?? []
                return (body["listen_type"] as? String ?? "", payload.compactMap { $0["listened_at"] as? Int },
                        payload.compactMap { ($0["track_metadata"] as? [String: Any])?["track_name"] as? String },
                        entry["status"] as? Int, body, entry["auth"] as? String ?? "")
            }
        }

        /// How many accepted requests held each listen (by `listened_at`): 1 each, or a listen was sent twice.
        var acceptedTimes: [Int: Int] {
            var counts: [Int: Int] = [:]
            for r in requests where r.status == 200 && r.type != "playing_now" {
                for t in r.times { counts[t, default: 0] += 1 }
            }
            return counts
        }
    }

    /// A short tagged track: a listen counts once half of it was heard.
    func track(_ d: Daemon, _ name: String, title: String, ids: Bool, frequency: Double = 440) throws -> String {
        let path = try d.sine(name, seconds: 3, frequency: frequency)
        var fields: [(key: String, value: String)] = [("TITLE", title), ("ARTIST", "Tonearm Test Artist"), ("ALBUM", "Test Album"),
                                                     ("TRACKNUMBER", "3")]
        if ids {
            fields += [("MUSICBRAINZ_TRACKID", Self.ids.recording), ("MUSICBRAINZ_RELEASETRACKID", Self.ids.track),
                       ("MUSICBRAINZ_ALBUMID", Self.ids.release), ("MUSICBRAINZ_RELEASEGROUPID", Self.ids.releaseGroup),
                       ("MUSICBRAINZ_ARTISTID", Self.ids.artists.joined(separator: "; "))]
        }
        try TagFields.write(path, fields)
        return path
    }

    /// `timeout`: short only where a server is made to hang; elsewhere long enough that a slow Maloja on a loaded machine
    /// never makes the daemon give up on a request that then succeeds (and send it again, rightly, to be deduplicated).
    func configure(_ d: Daemon, url: String, timeout: Double = 30) throws {
        let token = d.home.file("scrobble-token")
        try "\(Self.key)\n".write(to: token, atomically: true, encoding: .utf8)
        try d.writeConfig("""
            [plugins.scrobble]
            enabled = true
            url = "\(url)"
            token-file = "\(token.path)"
            timeout = \(timeout)
            retry-delay = 0.2
            max-retry-delay = 1
            """)
    }

    /// Waits for what Maloja stored: each look runs Python, so it looks four times a second, not fifty.
    func waitForMaloja(_ d: Daemon, _ what: String, _ condition: () async throws -> Bool) async throws {
        try await waitUntil(what, timeout: .seconds(90), interval: .milliseconds(250), detail: "daemon log:\n\(d.log.suffix(3000))", condition)
    }

    func bin() async throws -> String {
        let bin = await Self.venv.output
        try #require(FileManager.default.isExecutableFile(atPath: bin + "/maloja"), "scripts/scrobble-venv did not make the venv")
        return bin
    }

    @Test func listensArriveInMalojaWithTheirTimesAndIDsAndPlayingNowIsSent() async throws {
        let bin = try await bin()
        let d = try Daemon()
        let maloja = try await Maloja(bin: bin, folder: d.home.url)
        let board = try Switchboard(bin: bin, folder: d.home.url)
        try await board.start("forward \(maloja.url)")
        let a = try track(d, "a.wav", title: "First Song", ids: true), b = try track(d, "b.wav", title: "Second Song", ids: false, frequency: 660)
        try configure(d, url: board.url)
        let before = Int(Date().timeIntervalSince1970)
        try await d.start([a, b])
        try await waitForMaloja(d, "both listens in Maloja") { try await maloja.scrobbles().count == 2 }
        let after = Int(Date().timeIntervalSince1970)
        let rows = try await maloja.scrobbles()
        #expect(rows.map(\.title) == ["First Song", "Second Song"])
        // listened_at is when the listen began: the first after the start, the second about a track (3 s) later.
        #expect(rows[0].time >= before && rows[1].time <= after, "\(rows.map(\.time)) not within \(before)…\(after)")
        #expect(rows[1].time - rows[0].time >= 2, "\(rows.map(\.time))")
        #expect(rows[0].extra["recording_mbid"] as? String == Self.ids.recording)
        #expect(rows[0].extra["release_mbid"] as? String == Self.ids.release)
        #expect(rows[0].extra["track_mbid"] as? String == Self.ids.track)
        #expect(rows[0].extra["artist_mbids"] as? [String] == Self.ids.artists)
        #expect(rows[1].extra["recording_mbid"] == nil)
        // What was sent: "playing now" for each (no time), then the listens, each accepted once, with the token.
        let requests = board.requests
        let playing = requests.filter { $0.type == "playing_now" }
        #expect(playing.flatMap(\.titles) == ["First Song", "Second Song"] && playing.allSatisfy { $0.times.isEmpty })
        #expect(board.acceptedTimes == [rows[0].time: 1, rows[1].time: 1])
        #expect(requests.allSatisfy { $0.auth == "Token \(Self.key)" })
        let first = try #require(requests.first { $0.type != "playing_now" && $0.titles.contains("First Song") })
        let info = ((first.body["payload"] as? [[String: Any]])?.first?["track_metadata"] as? [String: Any])?["additional_info"] as? [String: Any]
        #expect(info?["release_group_mbid"] as? String == Self.ids.releaseGroup)
        #expect(info?["tracknumber"] as? Int == 3)
        #expect((2900...3100).contains(info?["duration_ms"] as? Int ?? 0), "\(String(describing: info))")
    }

    @Test func aServerAnswering500OrHangingCostsOnlyARetry() async throws {
        let bin = try await bin()
        let d = try Daemon()
        let maloja = try await Maloja(bin: bin, folder: d.home.url)
        let board = try Switchboard(bin: bin, folder: d.home.url)
        try await board.start("500")
        let a = try track(d, "a.wav", title: "Song One", ids: true), b = try track(d, "b.wav", title: "Song Two", ids: false, frequency: 660)
        try configure(d, url: board.url, timeout: 2)
        // --verbose: every retry is in the log (a problem said again is at debug level).
        try await d.start(["--verbose", a, b])
        try await d.waitFor("a listen answered 500", timeout: .seconds(60)) {
            board.requests.contains { $0.status == 500 && $0.type != "playing_now" }
        }
        // Playback goes on regardless: both tracks are heard and counted.
        try await d.waitFor("both listens counted") { d.log.components(separatedBy: "listened to").count - 1 >= 2 }
        board.set("hang")
        try await d.waitFor("a request left hanging", timeout: .seconds(60)) { board.requests.contains { $0.status == nil } }
        // The hang ends only when the mode changes: the daemon gave up on it by its own timeout meanwhile.
        try await d.waitFor("the daemon timing out on it", timeout: .seconds(60)) { d.log.contains("no answer in time") }
        let mark = d.log.count
        board.set("forward \(maloja.url)")
        try await waitForMaloja(d, "both listens in Maloja") { try await maloja.scrobbles().count == 2 }
        let rows = try await maloja.scrobbles()
        #expect(Set(rows.map(\.title)) == ["Song One", "Song Two"])
        // Never twice: each listen was in exactly one request the server accepted; unless Maloja, on a loaded machine,
        // took longer than the 2 s timeout to accept one (the daemon could not know, and rightly sent it again).
        let timedOutSince = d.log.dropFirst(mark).contains("no answer in time")
        let accepted = board.acceptedTimes
        #expect(Set(accepted.keys) == Set(rows.map(\.time)))
        #expect(accepted.values.allSatisfy { $0 == 1 || timedOutSince }, "\(board.requests.map { ($0.type, $0.times, $0.status) })")
        #expect(rows.first { $0.title == "Song One" }?.extra["recording_mbid"] as? String == Self.ids.recording)
    }

    @Test func anOfflineHourIsCaughtUpInBatchesAndAKill9LosesNothing() async throws {
        let bin = try await bin()
        let d = try Daemon()
        let board = try Switchboard(bin: bin, folder: d.home.url)  // not started yet: the server is offline
        try configure(d, url: board.url)
        // A listen queued while the server is away, then kill -9 (at any moment: an attempt may be under way).
        let a = try track(d, "a.wav", title: "Heard Before The Crash", ids: true)
        try await d.start([a])
        let queue = d.home.file("data/tonearm/scrobble/queue.jsonl")
        try await d.waitFor("the new listen queued on disk") {
            ((try? String(contentsOf: queue, encoding: .utf8)) ?? "").contains("Heard Before The Crash")
        }
        try await d.waitFor("an attempt that found no server") { d.log.contains("cannot connect") || d.log.contains("no connection") }
        await d.kill9()
        // An hour of listens queued offline, one every 5 minutes, appended as the daemon writes them.
        let now = Int(Date().timeIntervalSince1970)
        let seeded = (0..<12).map { now - 3600 + $0 * 300 }
        let lines = seeded.enumerated().map { i, t in
            "{\"add\":{\"id\":\"seed-\(i)\",\"listen\":{\"listenedAt\":\(t),\"artist\":\"Offline Artist\",\"title\":\"Offline \(i)\",\"duration\":200}}}\n"
        }.joined()
        let handle = try FileHandle(forWritingTo: queue)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines.utf8))
        try handle.close()
        // The server comes back; so does the daemon, playing nothing: the queue goes out, in batches, once.
        let maloja = try await Maloja(bin: bin, folder: d.home.url)
        try await board.start("forward \(maloja.url)")
        try await d.start()
        try await waitForMaloja(d, "all 13 listens in Maloja") { try await maloja.scrobbles().count == 13 }
        let rows = try await maloja.scrobbles()
        #expect(Array(rows.map(\.time).prefix(12)) == seeded)
        #expect(rows.last?.title == "Heard Before The Crash" && rows.last?.extra["recording_mbid"] as? String == Self.ids.recording)
        #expect(board.acceptedTimes.count == 13 && board.acceptedTimes.values.allSatisfy { $0 == 1 }, "\(board.acceptedTimes)")
        // The hour in one request (the listen heard before the crash too, unless its request was under way at the kill:
        // then it went alone, in case the server had it already).
        let imports = board.requests.filter { $0.type == "import" && $0.status == 200 }
        #expect(imports.contains { Set(seeded).isSubset(of: $0.times) }, "\(board.requests.map { ($0.type, $0.times.count, $0.status) })")
        // Accepted listens leave the queue.
        try await d.waitFor("the queue emptied") {
            ScrobblingTests.pending((try? String(contentsOf: queue, encoding: .utf8)) ?? "") == 0
        }
    }

    @Test func noTokenLeavesScrobblingOffAndARefusedOneKeepsTheListens() async throws {
        let bin = try await bin()
        let d = try Daemon()
        let maloja = try await Maloja(bin: bin, folder: d.home.url)
        func configure(tokenEnv: String) throws {
            try d.writeConfig("""
                [plugins.scrobble]
                enabled = true
                url = "\(maloja.url)/apis/listenbrainz"
                token-env = "\(tokenEnv)"
                retry-delay = 0.2
                max-retry-delay = 1
                """)
        }
        // No token: one line in the log says why scrobbling is off; the player plays and counts as usual.
        try configure(tokenEnv: "TONEARM_TEST_NO_SUCH_TOKEN")
        let a = try track(d, "a.wav", title: "Never Sent", ids: false)
        try await d.start([a])
        try await d.waitFor("the reason in the log") { d.log.contains("scrobbling is off") && d.log.contains("TONEARM_TEST_NO_SUCH_TOKEN") }
        try await d.waitFor("played and counted") { d.log.contains("listened to Never Sent") }
        _ = await d.terminate()
        // A wrong token: refused with 401, said in the log, the listen kept on disk.
        try configure(tokenEnv: "TONEARM_TEST_TOKEN")
        d.extraEnvironment["TONEARM_TEST_TOKEN"] = "not-the-key"
        let b = try track(d, "b.wav", title: "Kept While Refused", ids: false, frequency: 660)
        try await d.start([b])
        try await d.waitFor("the refusal in the log") { d.log.contains("refused the token (HTTP 401)") }
        let queue = d.home.file("data/tonearm/scrobble/queue.jsonl")
        #expect(ScrobblingTests.pending((try? String(contentsOf: queue, encoding: .utf8)) ?? "") == 1)
        _ = await d.terminate()
        // The right token: what was kept arrives; what was heard while scrobbling was off never does.
        d.extraEnvironment["TONEARM_TEST_TOKEN"] = Self.key
        try await d.start()
        try await waitForMaloja(d, "the kept listen in Maloja") { try await maloja.scrobbles().count == 1 }
        #expect(try await maloja.scrobbles().map(\.title) == ["Kept While Refused"])
    }

    /// Listens still pending in a journal's text: added and not done.
    static func pending(_ text: String) -> Int {
        var added = Set<String>(), finished = Set<String>()
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if let id = (object["add"] as? [String: Any])?["id"] as? String { added.insert(id) }
            for key in ["done", "aside"] { for id in object[key] as? [String] ?? [] { finished.insert(id) } }
        }
        return added.subtracting(finished).count
    }
}

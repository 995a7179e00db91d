import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 7: a seeded, model-based stress run. The real daemon plays a few generated files (and is offered broken
/// ones) while a seeded generator sends it random bursts of MPRIS and Tonearm commands with random gaps of
/// 0–300 ms; two CPU burners load the machine for the later two thirds. After every burst the test waits for the
/// state to settle (polling, bounded) and checks the rules that MPRIS and the issue tracker say must always hold
/// (see `Rule`). A broken rule is recorded with the seed, the step and the last steps, so it can be replayed:
/// TONEARM_STRESS_SEED=N (default: TONEARM_RELIABILITY_SEED, else a fresh seed, printed), TONEARM_STRESS_STEPS=N
/// (default 300, or 3,000 with TONEARM_RELIABILITY=full).
/// No rule is about speed except "a reply within 5 s" (the daemon must never block); replies over 1 s are counted
/// and reported.
@Suite(.serialized, .timeLimit(.minutes(120))) struct ModelStressTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seed: UInt64 = environment["TONEARM_STRESS_SEED"].flatMap(UInt64.init)
        ?? environment["TONEARM_RELIABILITY_SEED"].flatMap(UInt64.init)
        ?? UInt64.random(in: 1...9_999_999)
    static let steps: Int = environment["TONEARM_STRESS_STEPS"].flatMap(Int.init) ?? Reliability.size(300, 3000)

    @Test func randomCommandsKeepTheMPRISRules() async throws {
        print("ModelStress: seed \(Self.seed), \(Self.steps) steps; replay with TONEARM_STRESS_SEED=\(Self.seed) TONEARM_STRESS_STEPS=\(Self.steps)")
        let d = try Daemon()
        let media = try await StressMedia.make(in: d, seed: Self.seed)
        // Subscribed before the daemon starts, so no signal of it is missed.
        let signals = try await StressSignals(d.client)
        // Verbose: a broken rule prints the daemon's last decisions (the playback machine's included).
        try await d.start(media.initialQueue + ["--verbose"], sink: "fakesink sync=true")
        // The daemon answers before GStreamer is ready and holds Position until audio really plays; the timing rules
        // are about a pipeline that exists.
        try await d.waitFor("the audio engine ready", timeout: .seconds(60)) { d.log.contains("audio engine ready") }
        let run = try StressRun(daemon: d, media: media, signals: signals, seed: Self.seed, steps: Self.steps)
        defer { run.stopBurners() }
        await run.go()
        run.stopBurners()
        await run.finish()
        run.report()
        _ = await d.terminate()
    }
}

/// The rules checked, by name (the names appear in failures and in RELIABILITY.md).
enum Rule: String, CaseIterable {
    case reply = "every call and Get is answered within 5 s"
    case statusValue = "PlaybackStatus is Playing, Paused or Stopped"
    case pausedFrozen = "Paused: Position frozen (two reads ≥ 300 ms apart equal)"
    case playingAdvances = "Playing: Position advances at about Rate (reads ≥ 500 ms apart)"
    case stoppedZero = "Stopped: Position is 0"
    case positionRange = "Position ≥ 0 and ≤ mpris:length (+1 s)"
    case seekLands = "Position read right after Seek/SetPosition is the target"
    case seekedSignal = "an accepted Seek/SetPosition is followed by Seeked"
    case seekPair = "two relative +3 s Seeks add up to +6 s"
    case canSeek = "CanSeek true whenever a local file of known length is current and not Stopped (per track)"
    case nextNoop = "Next with CanGoNext false changes nothing"
    case previousNoop = "Previous with CanGoPrevious false changes nothing"
    case trackID = "Metadata has mpris:trackid (an object path, not NoTrack) for a current track"
    case metadataSignalled = "a new track id is signalled (PropertiesChanged Metadata)"
    case rateRange = "Rate within MinimumRate…MaximumRate (and MinimumRate ≤ 1 ≤ MaximumRate)"
    case volume = "Volume ≥ 0"
    case loopValue = "LoopStatus is None, Track or Playlist"
    case statusSignalled = "PlaybackStatus changes are signalled (PropertiesChanged)"
    case commandEffect = "after Stop the status is Stopped; after Pause it is not Playing"
    case openUri = "OpenUri of a playable file succeeds and, from Stopped, plays"
    case alive = "the daemon stays up and its log shows no crash"
}

/// The files the run plays: good ones of known length (one ≥ 30 s) and two broken ones.
struct StressMedia {
    struct File {
        let name: String
        let path: String
        let good: Bool
        let seconds: Double
        var uri: String { Daemon.uri(path) }
    }

    var files: [File]
    var good: [File] { files.filter(\.good) }
    var broken: [File] { files.filter { !$0.good } }
    var initialQueue: [String] { ["long-45s.wav", "medium-20s.ogg", "short-8s.flac", "tiny-5s.wav"].map { name in files.first { $0.name == name }!.path } }
    func file(named name: String?) -> File? { files.first { $0.name == name } }

    static func make(in d: Daemon, seed: UInt64) async throws -> StressMedia {
        func encode(_ name: String, seconds: Double, frequency: Int, _ chain: [String]) async throws -> String {
            let path = d.media.file(name).path
            let (_, err, status) = try await gstLaunch([
                "-q", "audiotestsrc", "wave=sine", "freq=\(frequency)", "samplesperbuffer=4410", "num-buffers=\(Int(seconds * 10))", "!",
                "audio/x-raw,rate=44100,channels=1", "!", "audioconvert", "!",
            ] + chain + ["!", "filesink", "location=\(path)"])
            try #require(status == 0, "gst-launch-1.0 could not make \(name): \(err)")
            return path
        }
        var files: [File] = []
        files.append(File(name: "long-45s.wav", path: try d.sine("long-45s.wav", seconds: 45, frequency: 330), good: true, seconds: 45))
        files.append(File(name: "medium-20s.ogg", path: try await encode("medium-20s.ogg", seconds: 20, frequency: 440, ["vorbisenc", "!", "oggmux"]),
                          good: true, seconds: 20))
        files.append(File(name: "short-8s.flac", path: try await encode("short-8s.flac", seconds: 8, frequency: 550, ["flacenc"]), good: true, seconds: 8))
        files.append(File(name: "tiny-5s.wav", path: try d.sine("tiny-5s.wav", seconds: 5, frequency: 660), good: true, seconds: 5))
        files.append(File(name: "other-30s.ogg", path: try await encode("other-30s.ogg", seconds: 30, frequency: 770, ["vorbisenc", "!", "oggmux"]),
                          good: true, seconds: 30))
        // A 20 s Ogg cut at 45% of its bytes (mid-page), and 40 kB of random bytes named .ogg.
        let whole = try await encode("whole-20s.ogg", seconds: 20, frequency: 880, ["vorbisenc", "!", "oggmux"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let truncated = d.media.file("truncated.ogg")
        try bytes.prefix(bytes.count * 45 / 100).write(to: truncated)
        try FileManager.default.removeItem(atPath: whole)
        files.append(File(name: "truncated.ogg", path: truncated.path, good: false, seconds: 0))
        var random = SeededGenerator(seed: seed)
        let noise = d.media.file("random.ogg")
        try Data((0..<40_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }).write(to: noise)
        files.append(File(name: "random.ogg", path: noise.path, good: false, seconds: 0))
        return StressMedia(files: files)
    }
}

/// Every signal the daemon sends on its object, in arrival order, with barriers: `barrier()` sends a signal from a
/// second connection and waits until it comes back, so every signal the daemon sent before the last reply has been
/// recorded by then (the bus delivers in the order it routed).
final class StressSignals: @unchecked Sendable {
    static let barrierInterface = "org.tonearm.StressTest"
    private let lock = NSLock()
    private var entries: [DBusSignal] = []
    private var lastBarrier: Int64 = 0
    private var task: Task<Void, Never>?

    init(_ connection: DBusConnection) async throws {
        let stream = try await connection.subscribe(DBusMatchRule(path: Daemon.path))
        task = Task { [weak self] in
            for await signal in stream { self?.add(signal) }
        }
    }

    deinit { task?.cancel() }

    private func add(_ signal: DBusSignal) {
        lock.withLock {
            if signal.interface == Self.barrierInterface {
                lastBarrier = max(lastBarrier, signal.arguments.first?.int64Value ?? 0)
            } else {
                entries.append(signal)
            }
        }
    }

    var count: Int { lock.withLock { entries.count } }
    var barrierSeen: Int64 { lock.withLock { lastBarrier } }

    /// Whether a signal named one of `members` arrived at or after `index`.
    func any(since index: Int, _ members: Set<String>) -> Bool {
        lock.withLock { entries[min(index, entries.count)...].contains { members.contains($0.member) } }
    }

    func count(_ member: String) -> Int { lock.withLock { entries.filter { $0.member == member }.count } }

    /// The last value of a Player property in PropertiesChanged: nil when never signalled, `.some(nil)` when
    /// last invalidated.
    func lastSignalled(_ property: String) -> DBusValue?? {
        lock.withLock {
            for s in entries.reversed() where s.member == "PropertiesChanged" && s.arguments.first?.stringValue == Daemon.player {
                if let value = (s.arguments.count > 1 ? s.arguments[1].vardictValue : nil)?[property] { return .some(value) }
                if s.arguments.count > 2, (s.arguments[2].arrayValue ?? []).contains(where: { $0.stringValue == property }) { return .some(nil) }
            }
            return nil
        }
    }

    /// The Metadata values signalled at or after `index`.
    func signalledMetadata(since index: Int) -> [DBusValue] {
        lock.withLock {
            entries[min(index, entries.count)...].compactMap { s in
                guard s.member == "PropertiesChanged", s.arguments.first?.stringValue == Daemon.player, s.arguments.count > 1 else { return nil }
                return s.arguments[1].dictionaryEntries?.first { $0.key.stringValue == "Metadata" }?.value.unwrapped
            }
        }
    }
}

/// The player's state as one GetAll answered it.
struct PlayerState {
    var status = "", loop = "", rate = 1.0, volume = 1.0, minimumRate = 1.0, maximumRate = 1.0
    var metadata: [String: DBusValue] = [:]
    var position: Int64 = 0
    var canGoNext = false, canGoPrevious = false, canSeek = false, canPlay = false, canPause = false

    init?(_ all: [String: DBusValue]) {
        guard let status = all["PlaybackStatus"]?.stringValue else { return nil }
        self.status = status
        loop = all["LoopStatus"]?.stringValue ?? "?"
        rate = all["Rate"]?.doubleValue ?? .nan
        volume = all["Volume"]?.doubleValue ?? .nan
        minimumRate = all["MinimumRate"]?.doubleValue ?? .nan
        maximumRate = all["MaximumRate"]?.doubleValue ?? .nan
        metadata = all["Metadata"]?.vardictValue ?? [:]
        position = all["Position"]?.int64Value ?? -1
        canGoNext = all["CanGoNext"]?.boolValue ?? false
        canGoPrevious = all["CanGoPrevious"]?.boolValue ?? false
        canSeek = all["CanSeek"]?.boolValue ?? false
        canPlay = all["CanPlay"]?.boolValue ?? false
        canPause = all["CanPause"]?.boolValue ?? false
    }

    var trackIDValue: DBusValue? { metadata["mpris:trackid"] }
    var trackID: String { trackIDValue?.stringValue ?? "" }
    var length: Int64? { metadata["mpris:length"]?.int64Value.flatMap { $0 > 0 ? $0 : nil } }
    var fileName: String? { metadata["xesam:url"]?.stringValue.flatMap { URL(string: $0)?.lastPathComponent } }
    var short: String {
        "\(status) \(trackID.split(separator: "/").last.map(String.init) ?? "-")(\(fileName ?? "-")) \(seconds(position))/\(length.map(seconds) ?? "?") "
            + "rate \(rate) loop \(loop)\(canGoNext ? "" : " !next")\(canGoPrevious ? "" : " !prev")\(canSeek ? "" : " !seek")"
    }
}

func seconds(_ microseconds: Int64) -> String { String(format: "%.3fs", Double(microseconds) / 1e6) }

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// One run: the generator, the model's pending expectations, the tallies.
final class StressRun {
    enum Kind: CaseIterable {
        case play, pause, playPause, stop, seek, seekPair, setPosition, next, previous, openGood, openBroken
        case addTrack, enqueue, removeTrack, moveTrack, clear, volume, rate, loop, shuffle
    }

    static let weights: [(Kind, UInt64)] = [
        (.play, 70), (.pause, 70), (.playPause, 60), (.stop, 35), (.seek, 120), (.seekPair, 30), (.setPosition, 120),
        (.next, 70), (.previous, 55), (.openGood, 40), (.openBroken, 15), (.addTrack, 45), (.enqueue, 30), (.removeTrack, 50),
        (.moveTrack, 15), (.clear, 5), (.volume, 30), (.rate, 40), (.loop, 45), (.shuffle, 25),
    ]
    static let totalWeight = weights.reduce(0) { $0 + $1.1 }
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    let d: Daemon
    let media: StressMedia
    let signals: StressSignals
    let seed: UInt64
    let steps: Int
    var random: SeededGenerator
    let barrierConnection: DBusConnection
    let clock = ContinuousClock()
    let begin: ContinuousClock.Instant
    var barrierSerial: Int64 = 0

    // Replies.
    var replies = 0, slowReplies = 0
    var maxReply = 0.0, maxReplyWhat = ""
    var errorNames: [String: Int] = [:]
    // Rules.
    var checked: [Rule: Int] = [:]
    var failed: [Rule: Int] = [:]
    var examples: [String] = []
    // The steps so far, for failure messages.
    var log: [String] = []
    var step = 0
    var bursts = 0, unsettled = 0
    var lastState: PlayerState?
    var lastStateAt = ContinuousClock.now
    var canSeekChecked: Set<String> = [], canSeekFailed: Set<String> = []
    var initialStatus = "", initialTrackID = ""
    var metadataSignalsChecked = 0
    var dead = false
    var burners: CPUBurners?
    var loadStartedAt: Int?
    var duration = 0.0

    // Expectations the next settle checks.
    struct SeekedExpectation { let track: String; let signalIndex: Int; let step: Int; let what: String }
    var pendingSeeked: [SeekedExpectation] = []
    struct NoopExpectation { let rule: Rule; let before: PlayerState; let step: Int; let validUntil: ContinuousClock.Instant; let signalIndex: Int }
    var pendingNoop: NoopExpectation?
    enum StatusExpectation { case stopped, notPlaying, plays(previous: PlayerState, validUntil: ContinuousClock.Instant, signalIndex: Int) }
    var pendingStatus: (StatusExpectation, step: Int)?

    init(daemon: Daemon, media: StressMedia, signals: StressSignals, seed: UInt64, steps: Int) throws {
        d = daemon
        self.media = media
        self.signals = signals
        self.seed = seed
        self.steps = steps
        random = SeededGenerator(seed: seed)
        barrierConnection = try DBusConnection.connect(address: daemon.bus.address)
        begin = ContinuousClock.now
    }

    deinit { barrierConnection.close() }

    var elapsed: Double { (clock.now - begin).inSeconds }

    // MARK: The run

    func go() async {
        if let s = await getAll() {
            initialStatus = s.status
            initialTrackID = s.trackID
        }
        while step < steps && !dead {
            bursts += 1
            let burst = 1 + Int(random.next() % 5)
            for _ in 0..<burst where step < steps && !dead {
                if step == steps / 3 { startBurners() }
                let draws = (random.next(), random.next(), random.next(), random.next())
                let kind = Self.kind(draws.0)
                let endsBurst = await perform(kind, draws.1, draws.2)
                step += 1
                // A third of the gaps are none at all: commands that arrive while the last one is still being carried out.
                let gap = draws.3 % 3 == 0 ? 0 : Int((draws.3 / 3) % 301)
                if gap > 0 { await letTimePass(.milliseconds(gap), because: "the random gap between a user's commands") }
                if endsBurst { break }
            }
            await settleAndCheck()
        }
        duration = elapsed
    }

    static func kind(_ draw: UInt64) -> Kind {
        var n = draw % totalWeight
        for (kind, weight) in weights {
            if n < weight { return kind }
            n -= weight
        }
        return .play
    }

    func startBurners() {
        guard burners == nil else { return }
        burners = try? CPUBurners()
        loadStartedAt = step
        print("ModelStress: step \(step): two CPU burners started")
    }

    func stopBurners() {
        burners?.stop()
        burners = nil
    }

    // MARK: Calls, timed

    @discardableResult
    func call(_ interface: String, _ member: String, _ arguments: [DBusValue] = [], _ what: String) async -> Result<[DBusValue], DBusError> {
        let start = clock.now
        let result: Result<[DBusValue], DBusError>
        do {
            result = .success(try await d.client.call(destination: Daemon.busName, path: Daemon.path, interface: interface, member: member,
                                                      arguments: arguments, timeout: .seconds(10)))
        } catch let e as DBusError {
            result = .failure(e)
        } catch {
            result = .failure(DBusError(name: "test.Error", message: "\(error)"))
        }
        let took = (clock.now - start).inSeconds
        replies += 1
        if took > 1 { slowReplies += 1 }
        if took > maxReply { maxReply = took; maxReplyWhat = what }
        if case .failure(let e) = result {
            errorNames[e.name, default: 0] += 1
            if e.name == "org.freedesktop.DBus.Error.NoReply" || e.name == "org.freedesktop.DBus.Error.Timeout" {
                note(.reply, failed: true, "\(what): no reply within 10 s (\(e.name))")
                return result
            }
            if e.name == "org.freedesktop.DBus.Error.ServiceUnknown" || e.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                if d.process?.isRunning != true, !dead {
                    dead = true
                    note(.alive, failed: true, "the daemon is gone (\(what) → \(e.name)); log tail:\n\(d.log.suffix(3000))")
                }
            }
        }
        note(.reply, failed: took > 5, "\(what) took \(String(format: "%.2f", took)) s")
        return result
    }

    func getAll() async -> PlayerState? {
        guard case .success(let reply) = await call("org.freedesktop.DBus.Properties", "GetAll", [.string(Daemon.player)], "GetAll(Player)"),
              let all = reply.first?.vardictValue, let state = PlayerState(all) else { return nil }
        lastState = state
        lastStateAt = clock.now
        checkCanSeek(state)
        return state
    }

    func get(_ interface: String, _ name: String) async -> DBusValue? {
        guard case .success(let reply) = await call("org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)], "Get(\(name))") else {
            return nil
        }
        return reply.first?.unwrapped
    }

    func position() async -> Int64? { await get(Daemon.player, "Position")?.int64Value }
    func tracks() async -> [String] { (await get(Daemon.trackList, "Tracks")?.arrayValue ?? []).compactMap(\.stringValue) }

    func set(_ name: String, _ value: DBusValue) async -> Result<[DBusValue], DBusError> {
        await call("org.freedesktop.DBus.Properties", "Set", [.string(Daemon.player), .string(name), .variant(value)], "Set(\(name), \(value))")
    }

    /// Waits until every signal the daemon sent before now is recorded (see `StressSignals`).
    func barrier() async {
        barrierSerial += 1
        let n = barrierSerial
        barrierConnection.emitSignal(path: Daemon.path, interface: StressSignals.barrierInterface, member: "Barrier", arguments: [.int64(n)])
        _ = await eventually(timeout: .seconds(10), interval: .milliseconds(2)) { signals.barrierSeen >= n }
    }

    // MARK: Failures

    /// Counts a check of `rule`; records a failure (the first three of each rule as test issues, with context).
    func note(_ rule: Rule, failed isFailure: Bool, _ detail: @autoclosure () -> String) {
        checked[rule, default: 0] += 1
        guard isFailure else { return }
        failed[rule, default: 0] += 1
        guard failed[rule]! <= 3 else { return }
        let message = """
            RULE BROKEN: \(rule.rawValue)
            \(detail())
            seed \(seed), step \(step) of \(steps) (burst \(bursts)), \(String(format: "%.1f", elapsed)) s into the run\(burners == nil ? "" : ", CPU burners running")
            last steps:
            \(log.suffix(10).map { "  " + $0 }.joined(separator: "\n"))
            replay: TONEARM_STRESS_SEED=\(seed) TONEARM_STRESS_STEPS=\(steps) swift test --skip-build --filter '^ReliabilityTests\\.ModelStress'
            the daemon's last lines:
            \(d.log.split(separator: "\n").suffix(150).map { "  " + $0 }.joined(separator: "\n"))
            """
        examples.append(message)
        print("ModelStress: " + message)
        Issue.record(Comment(rawValue: message))
    }

    func record(_ text: String) {
        let age = Int((clock.now - lastStateAt).inSeconds * 1000)
        log.append("#\(step) +\(String(format: "%.3f", elapsed))s [read \(age) ms before: \(lastState?.short ?? "?")] \(text)")
    }

    static func describe(_ result: Result<[DBusValue], DBusError>) -> String {
        switch result {
        case .success: return "ok"
        case .failure(let e): return e.name.replacingOccurrences(of: "org.tonearm.Error.", with: "Error.")
        }
    }

    // MARK: Steps

    /// Performs one step and its checks that belong right after the reply; returns whether the burst should end here
    /// (an expectation that later commands would spoil).
    func perform(_ kind: Kind, _ r1: UInt64, _ r2: UInt64) async -> Bool {
        // A later command may legitimately undo what an earlier one started.
        switch kind {
        case .volume, .rate, .loop, .shuffle, .seek, .seekPair, .setPosition, .enqueue, .moveTrack: break
        default:
            pendingStatus = nil
            if kind != .play && kind != .pause && kind != .playPause { pendingSeeked.removeAll() }
        }
        switch kind {
        case .play, .pause, .playPause, .stop:
            let member = ["Play", "Pause", "PlayPause", "Stop"][[Kind.play, .pause, .playPause, .stop].firstIndex(of: kind)!]
            let result = await call(Daemon.player, member, [], member)
            record("\(member) → \(Self.describe(result))")
            if case .success = result {
                if kind == .stop { pendingStatus = (.stopped, step) }
                if kind == .pause { pendingStatus = (.notPlaying, step) }
            }
            return false

        case .seek, .seekPair:
            let t0 = clock.now
            guard let before = await getAll() else { return false }
            let index = signals.count
            if kind == .seekPair {
                let first = await call(Daemon.player, "Seek", [.int64(3_000_000)], "Seek(+3s)")
                let second = await call(Daemon.player, "Seek", [.int64(3_000_000)], "Seek(+3s)")
                record("Seek(+3s) → \(Self.describe(first)); Seek(+3s) → \(Self.describe(second)) at once")
                guard case .success = first, case .success = second else { return false }
                await checkLanding(before: before, target: before.position + 6_000_000, since: t0, signalIndex: index, what: "Seek(+3s) twice", rule: .seekPair)
            } else {
                let magnitude = Int64(1 + r1 % 10) * 1_000_000
                let offset = r2 % 3 == 0 ? -magnitude : magnitude
                let what = "Seek(\(offset > 0 ? "+" : "")\(seconds(offset)))"
                let result = await call(Daemon.player, "Seek", [.int64(offset)], what)
                record("\(what) → \(Self.describe(result))")
                guard case .success = result else { return false }
                await checkLanding(before: before, target: max(0, before.position + offset), since: t0, signalIndex: index, what: what, rule: .seekLands)
            }
            return false

        case .setPosition:
            let t0 = clock.now
            guard let before = await getAll() else { return false }
            let stale = r2 % 8 == 0
            let room = max(0, (before.length ?? 10_000_000) - Int64((1.5 + 2 * before.rate) * 1e6))
            let target = Int64(Double(r1 % 10_000) / 10_000 * Double(room))
            var id = before.trackID.hasPrefix("/") ? before.trackID : Self.noTrack
            if stale { id = id == Self.noTrack ? "/org/tonearm/track/999999" : Self.noTrack }
            let index = signals.count
            let what = "SetPosition(\(id.split(separator: "/").last ?? ""), \(seconds(target)))"
            let result = await call(Daemon.player, "SetPosition", [.objectPath(id), .int64(target)], what)
            record("\(what)\(stale ? " (stale id)" : "") → \(Self.describe(result))")
            guard case .success = result, !stale else { return false }
            await checkLanding(before: before, target: target, since: t0, signalIndex: index, what: what, rule: .seekLands)
            return false

        case .next, .previous:
            let t0 = clock.now
            guard let before = await getAll() else { return false }
            let index = signals.count
            let member = kind == .next ? "Next" : "Previous"
            let result = await call(Daemon.player, member, [], member)
            record("\(member) → \(Self.describe(result))")
            let can = kind == .next ? before.canGoNext : before.canGoPrevious
            guard !can, media.file(named: before.fileName)?.good ?? (before.status == "Stopped") else { return false }
            // Nothing may change on its own meanwhile: a playing track must be far from its end.
            var left = 1e9
            if before.status == "Playing" {
                guard let length = before.length else { return false }
                left = Double(length - before.position) / 1e6 / before.rate - 1.5
                guard left > 1 else { return false }
            }
            pendingNoop = NoopExpectation(rule: kind == .next ? .nextNoop : .previousNoop, before: before, step: step,
                                          validUntil: t0 + .milliseconds(Int(min(left, 1e6) * 1000)), signalIndex: index)
            return true

        case .openGood, .openBroken:
            let choices = kind == .openGood ? media.good : media.broken
            let file = choices[Int(r1 % UInt64(choices.count))]
            let before = await getAll()
            let index = signals.count
            let result = await call(Daemon.player, "OpenUri", [.string(file.uri)], "OpenUri(\(file.name))")
            record("OpenUri(\(file.name)) → \(Self.describe(result))")
            guard kind == .openGood else { return false }
            switch result {
            case .failure(let e):
                note(.openUri, failed: true, "OpenUri(\(file.name)), a playable file, was refused: \(e)")
                return false
            case .success:
                guard let before, before.status == "Stopped" else { return false }
                // It must play (unless it could have ended by the time we look: a short file at a high rate).
                let playable = file.seconds / before.rate - 1.5
                guard playable > 1 else { return false }
                pendingStatus = (.plays(previous: before, validUntil: clock.now + .milliseconds(Int(playable * 1000)), signalIndex: index), step)
                return true
            }

        case .addTrack, .enqueue, .removeTrack, .moveTrack, .clear:
            let ids = await tracks()
            var kind = kind
            if (kind == .addTrack || kind == .enqueue) && ids.count >= 12 { kind = .removeTrack }
            if (kind == .removeTrack || kind == .moveTrack || kind == .clear) && ids.count <= 2 { kind = .enqueue }
            let file = media.files[Int(r1 % UInt64(media.files.count))]
            switch kind {
            case .addTrack:
                let slot = Int(r2 % UInt64(ids.count + 1))
                let after = slot == ids.count ? Self.noTrack : ids[slot]
                let current = (r2 / 7) % 5 == 0
                let result = await call(Daemon.trackList, "AddTrack", [.string(file.uri), .objectPath(after), .bool(current)], "AddTrack")
                record("AddTrack(\(file.name), after \(after.split(separator: "/").last ?? ""), current \(current)) → \(Self.describe(result))")
            case .enqueue:
                let result = await call(Daemon.tonearm, "Enqueue", [.stringArray([file.uri])], "Enqueue")
                record("Enqueue(\(file.name)) → \(Self.describe(result))")
            case .removeTrack:
                guard !ids.isEmpty else { return false }
                let id = ids[Int(r2 % UInt64(ids.count))]
                let result = await call(Daemon.trackList, "RemoveTrack", [.objectPath(id)], "RemoveTrack")
                record("RemoveTrack(\(id.split(separator: "/").last ?? "")\(id == lastState?.trackID ? ", the current one" : "")) → \(Self.describe(result))")
            case .moveTrack:
                let id = ids[Int(r1 % UInt64(ids.count))]
                let slot = Int(r2 % UInt64(ids.count + 1))
                let after = slot == ids.count ? Self.noTrack : ids[slot]
                let result = await call(Daemon.tonearm, "MoveTrack", [.objectPath(id), .objectPath(after)], "MoveTrack")
                record("MoveTrack(\(id.split(separator: "/").last ?? ""), after \(after.split(separator: "/").last ?? "")) → \(Self.describe(result))")
            default:
                let result = await call(Daemon.tonearm, "Clear", [], "Clear")
                record("Clear → \(Self.describe(result))")
            }
            return false

        case .volume:
            let value = [0, 0.25, 0.5, 0.8, 1.0, 1.3, -0.2][Int(r1 % 7)]
            let result = await set("Volume", .double(value))
            record("Volume = \(value) → \(Self.describe(result))")
            return false
        case .rate:
            let value = [0.5, 1.0, 1.0, 1.0, 1.5, 2.0][Int(r1 % 6)]
            let result = await set("Rate", .double(value))
            record("Rate = \(value) → \(Self.describe(result))")
            return false
        case .loop:
            let value = ["None", "None", "Track", "Playlist"][Int(r1 % 4)]
            let result = await set("LoopStatus", .string(value))
            record("LoopStatus = \(value) → \(Self.describe(result))")
            return false
        case .shuffle:
            let value = r1 % 3 == 0
            let result = await set("Shuffle", .bool(value))
            record("Shuffle = \(value) → \(Self.describe(result))")
            return false
        }
    }

    /// Right after a seek's reply: Position reads the target (within 0.5 s plus what the track played since the
    /// position it started from was read), while the same seekable track stays current and far from its end; and a
    /// Seeked signal is expected.
    func checkLanding(before: PlayerState, target: Int64, since t0: ContinuousClock.Instant, signalIndex: Int, what: String, rule: Rule) async {
        guard let landed = await position() else { return }
        let took = (clock.now - t0).inSeconds
        guard let after = await getAll() else { return }
        guard before.canSeek, before.status != "Stopped", after.status != "Stopped", before.trackID == after.trackID,
              before.trackID.hasPrefix("/"), before.rate == after.rate, media.file(named: before.fileName)?.good == true,
              let length = before.length, target >= 0, target + Int64((1.5 + 2 * before.rate) * 1e6) < length else { return }
        // The track must not have come to its end (and, looping, started again under the same id) before the seek.
        guard Double(before.position) / 1e6 + before.rate * took + 0.5 < Double(length) / 1e6 else { return }
        await barrier()
        guard !signals.any(since: signalIndex, ["TrackFailed"]) else { return }
        let slack = 500_000 + Int64(before.rate * took * 1e6)
        note(rule, failed: landed < target - 500_000 || landed > target + slack,
             "\(what): from \(seconds(before.position)) (\(before.status)) the target was \(seconds(target)); Position read right after the "
                + "reply: \(seconds(landed)) (allowed \(seconds(target - 500_000))…\(seconds(target + slack)), \(String(format: "%.3f", took)) s after "
                + "the position was read); track \(before.trackID) \(before.fileName ?? "")")
        pendingSeeked.append(SeekedExpectation(track: before.trackID, signalIndex: signalIndex, step: step, what: what))
    }

    // MARK: Settling and the rules

    /// In every state read: a good local file of known length that is current while not Stopped is seekable: the
    /// daemon knows its length, so there is no reason to refuse a seek (a seek refused "because CanSeek was false"
    /// during preroll is the bug this rule is about). Checked and counted once per track id.
    func checkCanSeek(_ s: PlayerState) {
        guard s.status != "Stopped", s.trackID.hasPrefix("/"), media.file(named: s.fileName)?.good == true, s.length != nil,
              !canSeekFailed.contains(s.trackID) else { return }
        if !canSeekChecked.contains(s.trackID) {
            canSeekChecked.insert(s.trackID)
            checked[.canSeek, default: 0] += 1
        }
        guard !s.canSeek else { return }
        canSeekFailed.insert(s.trackID)
        checked[.canSeek, default: 0] -= 1  // note() counts this check again
        note(.canSeek, failed: true, "CanSeek false for the current \(s.fileName ?? "") of known length: \(s.short)")
    }

    func settleAndCheck() async {
        guard !dead else { return }
        if d.process?.isRunning != true {
            dead = true
            note(.alive, failed: true, "the daemon exited; log tail:\n\(d.log.suffix(3000))")
            return
        }
        // Next/Previous with CanGo… false: the state right after equals the state before.
        if let e = pendingNoop {
            pendingNoop = nil
            if let now = await getAll() {
                await barrier()
                if clock.now < e.validUntil, !signals.any(since: e.signalIndex, ["TrackFailed"]) {
                    note(e.rule, failed: now.trackID != e.before.trackID || now.status != e.before.status,
                         "\(e.rule == .nextNoop ? "Next" : "Previous") at step \(e.step) with \(e.rule == .nextNoop ? "CanGoNext" : "CanGoPrevious") false: "
                            + "before \(e.before.short); after \(now.short)")
                }
            }
        }

        // Settled: the same status and track in two reads 150 ms apart (at most 5 s).
        var settled: PlayerState?
        let deadline = clock.now + .seconds(5)
        var previous = await getAll()
        while clock.now < deadline {
            await letTimePass(.milliseconds(150), because: "settled means unchanged over this stretch")
            let current = await getAll()
            if let p = previous, let c = current, p.status == c.status, p.trackID == c.trackID {
                settled = c
                break
            }
            previous = current
        }
        guard let s = settled else {
            unsettled += 1
            log.append("(did not settle within 5 s: \(lastState?.short ?? "?"))")
            return
        }

        // Commands took effect.
        if let (expectation, at) = pendingStatus {
            pendingStatus = nil
            switch expectation {
            case .stopped:
                note(.commandEffect, failed: s.status != "Stopped", "Stop at step \(at) answered, yet the settled status is \(s.short)")
            case .notPlaying:
                note(.commandEffect, failed: s.status == "Playing", "Pause at step \(at) answered, yet the settled status is \(s.short)")
            case .plays(let before, let validUntil, let index):
                var seen = s
                let playing = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
                    if let now = await getAll() { seen = now }
                    return seen.status == "Playing"
                }
                await barrier()
                if clock.now < validUntil || playing, !signals.any(since: index, ["TrackFailed"]) {
                    note(.openUri, failed: !playing, "OpenUri at step \(at) from Stopped (\(before.short)) did not play: \(seen.short)")
                }
            }
        }

        // Values.
        note(.statusValue, failed: !["Playing", "Paused", "Stopped"].contains(s.status), "PlaybackStatus \(s.status)")
        note(.loopValue, failed: !["None", "Track", "Playlist"].contains(s.loop), "LoopStatus \(s.loop)")
        note(.volume, failed: !(s.volume >= 0), "Volume \(s.volume)")
        note(.rateRange, failed: !(s.minimumRate <= s.rate && s.rate <= s.maximumRate && s.minimumRate <= 1 && s.maximumRate >= 1),
             "Rate \(s.rate), MinimumRate \(s.minimumRate), MaximumRate \(s.maximumRate)")
        if s.status != "Stopped" || s.metadata.keys.contains(where: { $0 != "mpris:trackid" }) {
            var ok = false
            if case .objectPath(let path)? = s.trackIDValue, path.hasPrefix("/"), path != Self.noTrack { ok = true }
            note(.trackID, failed: !ok, "status \(s.status) with Metadata \(s.metadata)")
        }
        for value in signals.signalledMetadata(since: metadataSignalsChecked) {
            let entries = value.vardictValue ?? [:]
            guard entries.keys.contains(where: { $0 != "mpris:trackid" }) else { continue }
            var ok = false
            if case .objectPath(let path)? = entries["mpris:trackid"], path.hasPrefix("/"), path != Self.noTrack { ok = true }
            note(.trackID, failed: !ok, "PropertiesChanged carried Metadata \(entries) without a proper mpris:trackid")
        }
        metadataSignalsChecked = signals.count

        // Position: bracketed by two reads of the same track (and status).
        if let a = await getAll(), let p = await position(), let b = await getAll(), a.trackID == b.trackID {
            if let length = a.length, a.length == b.length {
                note(.positionRange, failed: p < 0 || p > length + 1_000_000, "Position \(seconds(p)) with mpris:length \(seconds(length)); \(b.short)")
            } else {
                note(.positionRange, failed: p < 0, "Position \(seconds(p)); \(b.short)")
            }
            if a.status == "Stopped" && b.status == "Stopped" {
                note(.stoppedZero, failed: p != 0, "Position \(seconds(p)) while Stopped; \(b.short)")
            }
            if b.status == "Paused" && a.status == "Paused" { await checkFrozen(b) }
            if b.status == "Playing" && a.status == "Playing" { await checkAdvancing(b) }
        }

        // Every accepted seek was answered by Seeked (while its track stayed current).
        for e in pendingSeeked {
            var gone = false
            let arrived = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
                if signals.any(since: e.signalIndex, ["Seeked"]) { return true }
                if let n = await getAll(), n.trackID != e.track || n.status == "Stopped" { gone = true }
                return gone
            }
            if !gone { note(.seekedSignal, failed: !arrived, "no Seeked within 5 s after \(e.what) at step \(e.step); now \(lastState?.short ?? "?")") }
        }
        pendingSeeked.removeAll()

        // The last signalled PlaybackStatus and track id match what Get says (polling: they may still change).
        var mismatch = ""
        let statusOK = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
            guard let n = await getAll() else { return false }
            await barrier()
            switch signals.lastSignalled("PlaybackStatus") {
            case nil: mismatch = "never signalled, initial \(initialStatus), now \(n.status)"; return n.status == initialStatus
            case .some(nil): return true
            case .some(let v?): mismatch = "last signalled \(v.stringValue ?? "?"), Get says \(n.status)"; return v.stringValue == n.status
            }
        }
        note(.statusSignalled, failed: !statusOK, "PlaybackStatus: \(mismatch)")
        let trackOK = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
            guard let n = await getAll() else { return false }
            await barrier()
            switch signals.lastSignalled("Metadata") {
            case nil: mismatch = "never signalled, initial \(initialTrackID), now \(n.trackID)"; return n.trackID == initialTrackID
            case .some(nil): return true
            case .some(let v?):
                let signalled = v.vardictValue?["mpris:trackid"]?.stringValue ?? "none"
                mismatch = "last signalled \(signalled), Get says \(n.trackID)"
                return signalled == n.trackID
            }
        }
        note(.metadataSignalled, failed: !trackOK, "mpris:trackid: \(mismatch)")
    }

    /// Paused: two reads ≥ 300 ms apart are equal (a window with a Seeked or TrackFailed in it is tried again).
    func checkFrozen(_ s: PlayerState) async {
        for _ in 0..<3 {
            await barrier()
            let index = signals.count
            guard let p1 = await position() else { return }
            await letTimePass(.milliseconds(350), because: "a paused position that moved would move in that time")
            guard let p2 = await position(), let after = await getAll() else { return }
            await barrier()
            guard after.status == "Paused", after.trackID == s.trackID else { return }
            if signals.any(since: index, ["Seeked", "TrackFailed"]) { continue }
            note(.pausedFrozen, failed: p1 != p2, "Paused, yet Position moved from \(seconds(p1)) to \(seconds(p2)) in ≥ 350 ms with no Seeked; \(after.short)")
            return
        }
    }

    /// Playing: two reads ≥ 500 ms apart move by about Rate × the time between them (0.5×–1.5×, ±0.1–0.25 s),
    /// unless the track changed, ended, failed or was seeked meanwhile, or had not started at the first read (a track
    /// still prerolling stands at exactly 0 until it is heard; a loaded machine took 0.5 s to start one).
    func checkAdvancing(_ s: PlayerState) async {
        await barrier()
        let index = signals.count
        let t1a = clock.now
        guard let p1 = await position(), p1 != 0 else { return }
        let t1b = clock.now
        await letTimePass(.milliseconds(600), because: "the stretch the position's advance is measured over")
        let t2a = clock.now
        guard let p2 = await position() else { return }
        let t2b = clock.now
        guard let after = await getAll() else { return }
        await barrier()
        guard after.status == "Playing", after.trackID == s.trackID, after.rate == s.rate, let length = s.length,
              !signals.any(since: index, ["Seeked", "TrackFailed"]) else { return }
        let shortest = (t2a - t1b).inSeconds, longest = (t2b - t1a).inSeconds
        guard Double(p1) / 1e6 + s.rate * longest + 0.5 < Double(length) / 1e6 else { return }
        let moved = Double(p2 - p1) / 1e6
        let low = 0.5 * s.rate * shortest - 0.1, high = 1.5 * s.rate * longest + 0.25
        note(.playingAdvances, failed: moved < low || moved > high,
             "Playing at rate \(s.rate), Position went \(seconds(p1)) → \(seconds(p2)) (moved \(String(format: "%.3f", moved)) s) in "
                + "\(String(format: "%.3f", shortest))–\(String(format: "%.3f", longest)) s; allowed \(String(format: "%.3f", low))…"
                + "\(String(format: "%.3f", high)) s; \(after.short)")
    }

    // MARK: The end

    func finish() async {
        let alive = d.process?.isRunning == true
        let log = d.log
        let markers = ["Fatal error", "fatal error:", "Segmentation fault", "SIGSEGV", "SIGABRT", "SIGILL", "Illegal instruction", "Aborted", "panic", "Stack dump"]
        let crash = markers.first { log.contains($0) }
        note(.alive, failed: !alive || crash != nil,
             "alive at the end: \(alive); crash marker in the log: \(crash ?? "none")\n\(crash == nil ? "" : String(log.suffix(3000)))")
        if alive, !dead {
            let answered = await get("org.mpris.MediaPlayer2", "Identity") != nil
            note(.alive, failed: !answered, "the daemon no longer answers")
        }
    }

    func report() {
        let criticals = d.log.components(separatedBy: "\n").filter { $0.contains("CRITICAL") }.count
        let summary = Rule.allCases.map { r in "  \(failed[r, default: 0] == 0 ? "ok  " : "FAIL") \(r.rawValue): \(checked[r, default: 0]) checks, \(failed[r, default: 0]) failed" }
        print("""
            ModelStress: seed \(seed): \(step) steps in \(bursts) bursts, \(String(format: "%.1f", duration)) s\
            \(loadStartedAt.map { ", CPU burners from step \($0)" } ?? ""); \(unsettled) bursts did not settle within 5 s
            ModelStress: \(replies) replies, slowest \(String(format: "%.3f", maxReply)) s (\(maxReplyWhat)), \(slowReplies) over 1 s; \
            errors: \(errorNames.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            ModelStress: signals Seeked \(signals.count("Seeked")), TrackFailed \(signals.count("TrackFailed")), PropertiesChanged \
            \(signals.count("PropertiesChanged")); GLib CRITICAL lines in the daemon log: \(criticals)
            \(summary.joined(separator: "\n"))
            """)
        let broken = Rule.allCases.filter { failed[$0, default: 0] > 0 }
        Reliability.report(7, "Model-based stress", seed: seed, tried: [
            "TONEARM_STRESS_SEED=\(seed) replays the choices: \(step) random steps in \(bursts) bursts with gaps of 0–300 ms, in \(String(format: "%.0f", duration)) s: "
                + "Play, Pause, PlayPause, Stop, Seek ±1–10 s, pairs of Seek +3 s, SetPosition (current and stale ids), Next, Previous, OpenUri "
                + "(good files and a truncated Ogg and random bytes), AddTrack, Enqueue, RemoveTrack, MoveTrack, Clear, Volume, Rate, LoopStatus, Shuffle",
            "files: WAV 45 s and 5 s, Ogg Vorbis 20 s and 30 s, FLAC 8 s; sink fakesink sync=true; two CPU burners from step \(loadStartedAt ?? steps) on",
            "after each burst the state was let settle (same status and track in two reads 150 ms apart, at most 5 s) and every rule below checked",
        ], held: Rule.allCases.map { r in
            "\(r.rawValue): \(failed[r, default: 0] == 0 ? "held" : "BROKEN \(failed[r, default: 0]) times") (\(checked[r, default: 0]) checks)"
        } + (broken.isEmpty ? [] : ["the first failures, with the steps before them:\n\n```\n" + examples.prefix(6).joined(separator: "\n\n") + "\n```"]),
        figures: [("steps", "\(step)"), ("seconds", String(format: "%.0f", duration)), ("replies", "\(replies)"),
                  ("slowest reply (s)", String(format: "%.3f", maxReply)), ("replies over 1 s", "\(slowReplies)"),
                  ("bursts that did not settle in 5 s", "\(unsettled)"), ("Seeked signals", "\(signals.count("Seeked"))"),
                  ("TrackFailed signals", "\(signals.count("TrackFailed"))")]
            + errorNames.sorted { $0.value > $1.value }.prefix(8).map { ("replies \($0.key)", "\($0.value)") })
    }
}

import CGStreamer
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Playback

@Suite struct PipelineShellTests {
    /// about-to-finish reads the provider each time a track nears its end. Kept as a bare closure in a Mutex, it was
    /// wrapped in two more thunks at every read, so each hand-over ran deeper in the stack than the one before (a
    /// long-running daemon died of a stack overflow). The thousandth must run exactly as deep as the first.
    @Test func theNextItemProviderRunsAtTheSameDepthEveryTime() throws {
        let shell = try PipelineShell(output: .sink("fakesink"), logger: .init(label: "test"), prerollTimeout: .seconds(10))
        defer { shell.shutdown() }
        let depths = Mutex<[UInt]>([])
        shell.setProvider { finishing in
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            depths.withLock { $0.append(address) }
            return PlaybackItem(uri: finishing.uri, token: finishing.token + 1)
        }
        let first = PlaybackItem(uri: "file:///a.wav", token: 1)
        for _ in 0..<1000 { #expect(shell.nextItem(after: first)?.token == 2) }
        let all = depths.withLock { $0 }
        #expect(all.count == 1000)
        #expect(Set(all).count == 1, "the provider ran \((all.first ?? 0) &- (all.last ?? 0)) bytes deeper after 1000 reads")
    }

    /// The player's bus keeps what its reader reads: the pipeline's own state changes, not its children's (a Play or a
    /// Pause made each element post one, and each woke the reader's thread), and no type the reader does not ask for.
    @Test func theBusKeepsOnlyWhatItsReaderReads() throws {
        GStreamer.ensureInitialized()
        var error: UnsafeMutablePointer<GError>?
        let pipeline = try #require(gst_parse_launch("audiotestsrc is-live=true ! audioconvert ! fakesink sync=true", &error))
        defer { gst_element_set_state(pipeline, GST_STATE_NULL); gst_object_unref(pipeline) }
        let bus = try #require(gst_element_get_bus(pipeline))
        defer { gst_object_unref(bus) }
        tn_bus_keep_only_read(bus, pipeline, PipelineShell.readMessages)
        for state in [GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_PLAYING] {
            _ = gst_element_set_state(pipeline, state)
            _ = gst_element_get_state(pipeline, nil, nil, 5 * tn_second())
        }
        var stateChanges: [String] = [], types = Set<Int32>()
        while let message = gst_bus_pop(bus) {
            types.insert(message.pointee.type.rawValue)
            if message.pointee.type == GST_MESSAGE_STATE_CHANGED, let source = message.pointee.src, let path = tn_object_path(source) {
                stateChanges.append(String(cString: path))
                g_free(path)
            }
            gst_message_unref(message)
        }
        // NULL → READY → PAUSED → PLAYING, PLAYING → PAUSED, PAUSED → PLAYING: all the pipeline's own.
        #expect(stateChanges.count >= 5)
        #expect(Set(stateChanges).count == 1, "state changes from \(Set(stateChanges))")
        #expect(types.allSatisfy { $0 & PipelineShell.readMessages.rawValue != 0 })
    }

    /// Play's and Pause's state changes run in the order asked, a settle returns only after all asked before it, and
    /// the thread runs below the threads that answer clients.
    @Test func stateChangesRunInOrderOnAThreadBelowTheFaces() throws {
        let worker = StateChangeThread.shared
        let ran = Mutex<[Int]>([])
        for i in 0..<100 { worker.async { ran.withLock { $0.append(i) } } }
        worker.settle()
        #expect(ran.withLock { $0 } == Array(0..<100))
        #expect(Self.niceValues(ofThreadsNamed: "tonearm-state") == [5])
    }

    /// The shell's bus thread carries its name in the kernel (what top and perf show), not Foundation's default.
    @Test func theBusThreadIsNamed() async throws {
        let shell = try PipelineShell(output: .sink("fakesink"), logger: .init(label: "test"), prerollTimeout: .seconds(10))
        defer { shell.shutdown() }
        try await waitUntil("a thread named tonearm-bus", timeout: .seconds(30)) {
            !Self.niceValues(ofThreadsNamed: "tonearm-bus").isEmpty
        }
    }

    /// A shell playing a 30 s sine WAV (token 1), written into `dir`, into a synced fakesink: playbin is PLAYING.
    static func playingSine(in dir: TemporaryDirectory) async throws -> PipelineShell {
        GStreamer.ensureInitialized()
        let shell = try PipelineShell(output: .sink("fakesink sync=true"), logger: .init(label: "test"), prerollTimeout: .seconds(10))
        do {
            let url = dir.file("sine.wav")
            try sine(0..<(30 * 44_100)).write(to: url)
            shell.send(.load(item(url, 1), paused: false, at: 0, now: .now))
            try await waitUntil("playbin PLAYING", timeout: .seconds(30)) { tn_state_current(shell.playbin) == GST_STATE_PLAYING }
        } catch {
            shell.shutdown()
            throw error
        }
        return shell
    }

    /// The nice value of each of this process's threads named `name`, as the kernel has it (field 19 of its stat
    /// line, after the name in parentheses).
    static func niceValues(ofThreadsNamed name: String) -> [Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { tid -> Int? in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int(fields[16]) : nil
        }
    }

    /// A Pause or a Play is taken at once and announced (the caller tells its clients) before playbin's state change
    /// starts; then it starts.
    @Test func pauseAndPlayAreAnnouncedBeforePlaybinMoves() async throws {
        let dir = TemporaryDirectory("tonearm-announce")
        let shell = try await Self.playingSine(in: dir)
        defer { shell.shutdown() }
        var seen: (status: PlaybackState, target: GstState)?
        shell.send(.pause(now: .now)) { seen = (shell.snapshot.status, tn_state_target(shell.playbin)) }
        #expect(seen?.status == .paused)
        #expect(seen?.target == GST_STATE_PLAYING, "playbin's state change started before the announcement")
        try await waitUntil("playbin PAUSED", timeout: .seconds(30)) { tn_state_current(shell.playbin) == GST_STATE_PAUSED }
        shell.send(.play(now: .now)) { seen = (shell.snapshot.status, tn_state_target(shell.playbin)) }
        #expect(seen?.status == .playing)
        #expect(seen?.target == GST_STATE_PAUSED, "playbin's state change started before the announcement")
        try await waitUntil("playbin PLAYING again", timeout: .seconds(30)) { tn_state_current(shell.playbin) == GST_STATE_PLAYING }
    }

    /// A Pause holds the position its caller estimates for the item loaded (what its faces show, no query of the
    /// pipeline before the reply) until playbin has paused, then reads the pipeline's again; an estimate for another
    /// item (one handed over meanwhile) is not taken.
    @Test func aPauseHoldsTheCallersEstimateForTheItemLoaded() async throws {
        let dir = TemporaryDirectory("tonearm-estimate")
        let shell = try await Self.playingSine(in: dir)
        defer { shell.shutdown() }
        try await waitUntil("playing past 0.2 s", timeout: .seconds(30)) { (shell.position ?? 0) > 200_000_000 }
        // 20 s ahead of the pipeline: only taken from the estimate.
        let estimate: Int64 = 20_000_000_000
        var held: Int64?
        shell.send(.pause(now: .now), estimate: .init(token: 1, nanoseconds: estimate)) { held = shell.reportedPosition }
        #expect(held == estimate)
        try await waitUntil("the pipeline's position once paused", timeout: .seconds(30)) {
            tn_state_current(shell.playbin) == GST_STATE_PAUSED && shell.reportedPosition < 10_000_000_000
        }
        shell.send(.play(now: .now))
        try await waitUntil("playbin PLAYING again", timeout: .seconds(30)) { tn_state_current(shell.playbin) == GST_STATE_PLAYING }
        shell.send(.pause(now: .now), estimate: .init(token: 2, nanoseconds: estimate)) { held = shell.reportedPosition }
        let pipeline = try #require(held)
        #expect(pipeline > 200_000_000 && pipeline < 10_000_000_000, "held \(pipeline) ns, not the pipeline's position")
    }

    /// A Pause's state change, held behind another job of the state-change thread, is reported as under way (the next
    /// command would wait for it) until playbin has carried it out.
    @Test func aStateChangeUnderWayIsReportedUntilItIsDone() async throws {
        let dir = TemporaryDirectory("tonearm-changing")
        let shell = try await Self.playingSine(in: dir)
        defer { shell.shutdown() }
        try await waitUntil("no state change under way", timeout: .seconds(30)) { !shell.isChangingState }
        let release = DispatchSemaphore(value: 0)
        var during: Bool?
        shell.send(.pause(now: .now)) {
            during = shell.isChangingState
            // Ahead of the Pause's state change on its thread, which is handed over after this announcement.
            StateChangeThread.shared.async { release.wait() }
        }
        #expect(during == true, "a held state change was not reported before it started")
        #expect(shell.isChangingState, "a state change behind another job was not reported")
        #expect(tn_state_target(shell.playbin) == GST_STATE_PLAYING)
        release.signal()
        try await waitUntil("playbin PAUSED", timeout: .seconds(30)) { tn_state_current(shell.playbin) == GST_STATE_PAUSED }
        try await waitUntil("the state change reported done", timeout: .seconds(30)) { !shell.isChangingState }
    }
}

import CLinux
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// The loudness worker (`tonearmd --measure-loudness`, a child of the daemon) never outlives the daemon, even while
/// it is stopped for a track start: a stopped orphan would otherwise stay stopped, and hold its memory, for good.
/// The kernel wakes a stopped orphan itself only when its process group is orphaned, which is not the case when the
/// orphan is adopted by a subreaper in the same session (a service manager, a terminal multiplexer): this test is one.
@Suite(.serialized, .timeLimit(.minutes(12))) struct LoudnessWorkerTests {
    /// The processes whose parent is `parent` and whose command line has `--measure-loudness`.
    static func workers(of parent: pid_t) -> [pid_t] {
        // The daemon's children as its threads list them (/proc/PID/task/TID/children): pid order says nothing, since
        // pids wrap at pid_max (32,768 here) and a loaded suite starts that many processes within one test; reading
        // every process's stat every few milliseconds would keep one of this process's two concurrency threads busy.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? []
        let children = tasks.flatMap { tid -> [pid_t] in
            guard let data = FileManager.default.contents(atPath: "/proc/\(parent)/task/\(tid)/children") else { return [] }
            return String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
        }
        return children.filter { pid in
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: cmdline, as: UTF8.self).contains("--measure-loudness")
        }
    }

    /// Whether `pid` has a file whose path ends with `suffix` open.
    static func hasOpen(_ pid: pid_t, _ suffix: String) -> Bool {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.contains { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"))?.hasSuffix(suffix) == true
        }
    }

    /// The state letter (R, S, T, Z…) and parent of `pid` from /proc/PID/stat; nil when it is gone.
    static func state(of pid: pid_t) -> (letter: Character, parent: pid_t)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // "PID (comm) S PPID …": comm may hold spaces and parentheses, so read after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 1, let letter = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (letter, parent)
    }

    @Test func aWorkerStoppedWhenTheDaemonIsKilledDiesWithIt() async throws {
        let d = try Daemon()
        // Ten albums of one untagged track each: one worker per album, so there is always a next one to catch.
        for n in 1...10 {
            let album = d.home.file("Music/Album \(n)")
            try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
            try WAV.sine(frequency: 220 + Double(n) * 20, seconds: 20, sampleRate: 48000, channels: 1)
                .write(to: album.appendingPathComponent("track.wav"))
        }
        // This process adopts the orphan, as a user's service manager would; given up at the end, the orphan reaped.
        #expect(tn_set_child_subreaper(1) == 0)
        defer { _ = tn_set_child_subreaper(0) }
        try await d.start()
        let daemon = try #require(d.process?.pid)
        // Catch a worker and stop it, as the daemon does while a track starts.
        var caught: pid_t?
        // The workers run at nice 19 on purpose: with every CPU kept busy they get what the others leave, and beside the
        // rest of this target's daemons that can be minutes. The wait ends well inside the suite's limit, so that a
        // worker never seen is reported with the daemon's log.
        let found = await eventually(timeout: .seconds(540), interval: .milliseconds(5)) {
            // Once it has a track open it is measuring, so past its first lines (where it asks to die with its parent).
            for pid in Self.workers(of: daemon) where Self.hasOpen(pid, ".wav") && kill(pid, SIGSTOP) == 0 {
                if let s = Self.state(of: pid), s.letter != "Z" {
                    caught = pid
                    return true
                }
            }
            return false
        }
        guard found, let worker = caught else {
            Issue.record("no loudness worker was seen; the log says:\n\(d.log)")
            return
        }
        defer {
            kill(worker, SIGKILL)  // only if the check below fails: never leave a stopped process behind
            var status: Int32 = 0
            _ = waitpid(worker, &status, 0)
        }
        _ = await eventually(timeout: .seconds(30)) { Self.state(of: worker)?.letter == "T" }
        // Only the daemon: the harness's kill9 signals its whole process group, the worker with it.
        kill(daemon, SIGKILL)
        // Gone, or a zombie waiting for whoever adopted it to reap it: either way no longer stopped.
        let ended = await eventually(timeout: .seconds(30)) {
            guard let s = Self.state(of: worker) else { return true }
            return s.letter == "Z" || s.letter == "X"
        }
        #expect(ended, "the worker \(worker) is still \(Self.state(of: worker).map { String($0.letter) } ?? "?") after the daemon was killed")
    }
}

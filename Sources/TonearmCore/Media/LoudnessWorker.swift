import CLinux
import Foundation
import Playback

/// Loudness measured in a child process (`tonearmd --measure-loudness URI…`) that runs at nice 19:
/// GStreamer's decoding threads come from a pool shared with playback, so lowering their priority in this process
/// would also slow playback threads that reuse them. The child is stopped (SIGSTOP) while the control says pause,
/// and dies with the daemon (a stopped child of a killed daemon would otherwise stay stopped for good).
struct LoudnessWorker {
    let executable: String

    /// The flag the worker is started with.
    static let flag = "--measure-loudness"
    /// The environment variable that tells the worker which process it must not outlive.
    static let parentVariable = "TONEARM_LOUDNESS_PARENT"

    func measure(uris: [String], control: MeasurementControl) -> LoudnessGroup {
        func failed(_ message: String) -> LoudnessGroup {
            LoudnessGroup(tracks: uris.map { _ in .failure(PlaybackError(domain: "core", code: 0, message: message)) }, album: nil)
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-loudness-\(UUID().uuidString).json")
        guard FileManager.default.createFile(atPath: output.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: output) else { return failed("cannot create \(output.path)") }
        defer {
            try? handle.close()
            try? FileManager.default.removeItem(at: output)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [Self.flag] + uris
        process.environment = ProcessInfo.processInfo.environment.merging([Self.parentVariable: String(getpid())]) { $1 }
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return failed("cannot start \(executable): \(error)") }
        var stopped = false
        while process.isRunning {
            if control.isCancelled {
                if stopped { kill(process.processIdentifier, SIGCONT) }
                process.terminate()
                process.waitUntilExit()
                return failed("the measurement was cancelled")
            }
            let hold = control.shouldPause
            if hold != stopped {
                stopped = hold
                kill(process.processIdentifier, hold ? SIGSTOP : SIGCONT)
            }
            usleep(50_000)
        }
        guard process.terminationStatus == 0, let data = try? Data(contentsOf: output),
              let report = try? JSONDecoder().decode(Report.self, from: data), report.tracks.count == uris.count else {
            return failed("the loudness worker failed (status \(process.terminationStatus))")
        }
        return report.group
    }

    /// What the worker prints: one entry per URI, in order, and the album.
    struct Report: Codable {
        struct Track: Codable {
            var result: MeasuredLoudness?
            var error: String?
        }
        var tracks: [Track]
        var album: MeasuredLoudness?

        init(_ group: LoudnessGroup) {
            tracks = group.tracks.map { result in
                switch result {
                case .success(let r): Track(result: r, error: nil)
                case .failure(let e): Track(result: nil, error: e.message)
                }
            }
            album = group.album
        }

        var group: LoudnessGroup {
            LoudnessGroup(tracks: tracks.map { t in
                if let r = t.result { return .success(r) }
                return .failure(PlaybackError(domain: "stream", code: 0, message: t.error ?? "not measured"))
            }, album: album)
        }
    }

    /// The worker's side: lowest priority for this thread and every thread it starts, measure, print the report.
    public static func run(uris: [String]) -> Int32 {
        // The thread that started this process waits for it, so its exit means the daemon is gone. The parent check
        // closes the window where the daemon died before the request was made. (One stays open: a stop by the daemon in
        // the few milliseconds before this line, then the daemon killed; the kernel's own rule for orphaned process
        // groups still wakes and ends this process then, unless a subreaper in the same session adopts it.)
        if let parent = ProcessInfo.processInfo.environment[parentVariable].flatMap(Int32.init) {
            guard tn_die_with_parent() == 0, getppid() == parent else { return 1 }
        }
        // Nice 19, not SCHED_IDLE: on a machine kept busy by other work an idle-class process never runs at all.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        let group = LoudnessMeter.measure(uris: uris.map { $0.hasPrefix("/") ? URL(fileURLWithPath: $0).absoluteString : $0 })
        guard let data = try? JSONEncoder().encode(Report(group)) else { return 1 }
        FileHandle.standardOutput.write(data)
        return 0
    }
}

/// The entry point of `tonearmd --measure-loudness`.
public enum LoudnessWorkerMain {
    /// Measures `uris` (paths or URIs) at the lowest priority and prints the JSON report; returns the exit status.
    public static func run(_ uris: [String]) -> Int32 { LoudnessWorker.run(uris: uris) }
}

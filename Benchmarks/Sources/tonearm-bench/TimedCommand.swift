import Foundation
import TestSupport

/// Runs a short command and times it from just before posix_spawn to the end of its stdout (which closes when
/// it exits), read by a thread of its own: ChildProcess.wait polls every 5 ms, too coarse for a few-ms command.
enum TimedCommand {
    struct Outcome: Sendable {
        var wall: Duration
        var status: Int32
        var output: String
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> Outcome {
        let clock = ContinuousClock()
        let start = clock.now
        let child = try ChildProcess(executable, arguments, environment: environment)
        let (output, end) = await withCheckedContinuation { (continuation: CheckedContinuation<(String, ContinuousClock.Instant), Never>) in
            Thread {
                var data = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                if let fd = child.stdout {
                    while true {
                        let n = read(fd, &buffer, buffer.count)
                        if n > 0 { data += buffer[0..<n] } else if n < 0 && errno == EINTR { continue } else { break }
                    }
                    close(fd)
                }
                continuation.resume(returning: (String(decoding: data, as: UTF8.self), clock.now))
            }.start()
        }
        let status = await child.wait(timeout: .seconds(30)) ?? -1
        if status == -1 { child.kill() }
        return Outcome(wall: end - start, status: status, output: output.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

import Foundation

/// Spinning shells that keep CPUs busy, for tests of what must hold on a loaded machine.
public final class CPUBurners: Sendable {
    let processes: [ChildProcess]

    /// Starts `count` busy loops (one per CPU of the CI machines by default).
    public init(count: Int = 2) throws {
        processes = try (0..<count).map { _ in try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], captureOutput: false) }
    }

    /// Kills the loops (a released ChildProcess kills its own as well).
    public func stop() { for p in processes { p.kill() } }
}

import Foundation
import TestSupport

/// Memory and CPU time of a player: every process in the process groups of its programs (each is spawned
/// leading a group of its own, so helpers it starts are counted too; mpd's figures include mpDris2's).
enum ProcessStats {
    /// Resident memory now (VmRSS), summed, in MiB.
    static func residentMiB(_ processes: [ChildProcess]) -> Double? {
        let pids = members(of: processes)
        guard !pids.isEmpty else { return nil }
        var kB = 0.0
        for pid in pids {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Double($0) })
            else { continue }
            kB += value
        }
        return kB / 1024
    }

    /// CPU time so far (its exited threads included), summed, in seconds: the process's CPU clock, to the nanosecond.
    /// (utime + stime in /proc count 10 ms ticks: over a 10 s window a player near 0.2 s a minute read 0.18 or 0.24.)
    static func cpuSeconds(_ processes: [ChildProcess]) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return members(of: processes).reduce(0) { sum, pid in
            var clock = clockid_t()
            var now = timespec()
            if clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &now) == 0 {
                return sum + Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
            }
            guard let fields = statFields(pid), fields.count > 12,
                  let user = Double(fields[11]), let system = Double(fields[12]) else { return sum }
            return sum + (user + system) / ticks
        }
    }

    /// The pids whose process group is one of the children's groups.
    static func members(of processes: [ChildProcess]) -> [pid_t] {
        let groups = Set(processes.filter(\.isRunning).map(\.pid))
        guard !groups.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let fields = statFields(pid), fields.count > 2, let group = pid_t(fields[2]) else { return false }
            return groups.contains(group)
        }
    }

    /// /proc/PID/stat after the `(comm)` field: state, ppid, pgrp, …, utime (index 11), stime (12).
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
}

/// The machine's CPUs as /proc/stat counts them, to wait for quiet before a timed start.
enum MachineQuiet {
    /// (busy, total) jiffies over all CPUs since boot.
    static func jiffies() -> (busy: UInt64, total: UInt64)? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 5 else { return nil }
        let total = fields.reduce(0, +)
        return (total - fields[3] - fields[4], total)  // idle and iowait are not busy
    }

    /// Waits until the CPUs were at most `busyShare` busy over two windows of 100 ms in a row, or `limit` passed;
    /// returns whether it got quiet. A player's start is then timed after the previous player's session has wound
    /// down: in full runs, tonearm's start right after mpd's session took 70 ms to the bus name where it takes 25–33
    /// with nothing before it.
    @discardableResult
    static func wait(busyShare: Double = 0.15, limit: Duration = .seconds(10)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        var quietWindows = 0
        guard var last = jiffies() else { return false }
        while clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
            guard let now = jiffies() else { return false }
            let total = now.total - last.total
            let share = total == 0 ? 0 : Double(now.busy - last.busy) / Double(total)
            last = now
            quietWindows = share <= busyShare ? quietWindows + 1 : 0
            if quietWindows >= 2 { return true }
        }
        return false
    }
}

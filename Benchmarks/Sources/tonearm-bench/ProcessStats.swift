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

    /// User + system CPU time so far (utime + stime, which include the process's exited threads), summed, in seconds.
    static func cpuSeconds(_ processes: [ChildProcess]) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return members(of: processes).reduce(0) { sum, pid in
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

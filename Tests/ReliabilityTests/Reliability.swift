import DBus
import Foundation
import TestSupport

/// How big the reliability runs are: reduced in the everyday test command, full with TONEARM_RELIABILITY=full
/// (scripts/reliability), and where each part writes its figures for RELIABILITY.md.
enum Reliability {
    static let full = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY"] == "full"

    /// Picks the reduced or the full figure.
    static func size<T>(_ reduced: T, _ fullSize: T) -> T { full ? fullSize : reduced }

    /// The seed of every random choice, printed in the report so a failure can be replayed.
    static let seed: UInt64 = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY_SEED"].flatMap(UInt64.init) ?? 20_261_122

    /// Folder for the report fragments: TONEARM_RELIABILITY_OUT, else .build/reliability in the package.
    static var reportFolder: URL {
        if let out = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY_OUT"] { return URL(fileURLWithPath: out) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/reliability")
    }

    /// Writes one part's section (Markdown) for scripts/reliability to gather into RELIABILITY.md (`seed`: the part's own, if it has one).
    static func report(_ part: Int, _ title: String, seed: UInt64 = Reliability.seed, tried: [String], held: [String], figures: [(String, String)]) {
        var lines = ["## \(part). \(title)", "", "Size: \(full ? "full" : "reduced (the everyday test command)"); seed \(seed).", "", "What was tried:", ""]
        lines += tried.map { "- " + $0 }
        lines += ["", "What held:", ""]
        lines += held.map { "- " + $0 }
        if !figures.isEmpty {
            lines += ["", "| figure | value |", "|---|---:|"]
            lines += figures.map { "| \($0.0) | \($0.1) |" }
        }
        try? FileManager.default.createDirectory(at: reportFolder, withIntermediateDirectories: true)
        try? (lines.joined(separator: "\n") + "\n").write(to: reportFolder.appendingPathComponent("part\(part).md"), atomically: true, encoding: .utf8)
    }

    /// A process's resident memory in kB: all of it (VmRSS), and its anonymous part (RssAnon: the heap, stacks and
    /// written data, what a leak grows). The rest is pages of the executable and libraries, which grow as code runs
    /// for the first time (the kernel maps 16 pages around each), up to their size, and are given back under pressure.
    struct Resident: Sendable {
        var total: Int
        var anonymous: Int
    }

    /// The lowest of three samples a second apart, of each figure: transient allocations of the moment are not growth.
    static func settledResident(_ pid: pid_t) async -> Resident {
        var lowest = Resident(total: .max, anonymous: .max)
        for i in 0..<3 {
            if i > 0 { await letTimePass(.seconds(1), because: "samples spread over time") }
            if let total = rss(pid) { lowest.total = min(lowest.total, total) }
            if let anonymous = status(pid, "RssAnon") { lowest.anonymous = min(lowest.anonymous, anonymous) }
        }
        return Resident(total: lowest.total == .max ? 0 : lowest.total, anonymous: lowest.anonymous == .max ? 0 : lowest.anonymous)
    }

    /// Resident memory of a process, in kB (VmRSS).
    static func rss(_ pid: pid_t) -> Int? { status(pid, "VmRSS") }

    /// Threads of a process.
    static func threads(_ pid: pid_t) -> Int? { status(pid, "Threads") }

    /// Open file descriptors of a process.
    static func fileDescriptors(_ pid: pid_t) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    private static func status(_ pid: pid_t, _ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}


extension Array where Element == Double {
    /// Nearest-rank percentile of unsorted values.
    func percentile(_ p: Double) -> Double {
        guard !isEmpty else { return 0 }
        let s = sorted()
        return s[Swift.min(s.count - 1, Swift.max(0, Int((p * Double(s.count)).rounded(.up)) - 1))]
    }
}

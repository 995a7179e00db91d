import Foundation
import Logging

/// Log lines for where they end up: the journal when systemd runs the daemon (a priority prefix systemd reads,
/// no timestamp: the journal adds its own), a terminal (time, coloured level), or a file or pipe (ISO time).
struct TonearmLogHandler: LogHandler {
    enum Destination { case journal, terminal, plain }

    let label: String
    let destination: Destination
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The journal when stderr is the stream systemd gave us (JOURNAL_STREAM names its device and inode).
    static func destination(environment: [String: String] = ProcessInfo.processInfo.environment) -> Destination {
        if let stream = environment["JOURNAL_STREAM"] {
            var info = stat()
            if fstat(2, &info) == 0, stream == "\(info.st_dev):\(info.st_ino)" { return .journal }
        }
        return isatty(2) == 1 ? .terminal : .plain
    }

    func log(event: LogEvent) {
        let level = event.level
        let message = event.message
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        if let error = event.error { all["error"] = "\(error)" }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text: String
        switch destination {
        case .journal:
            text = "<\(Self.syslogPriority(level))>\(label): \(message)\(fields)\n"
        case .terminal:
            let time = LogTimestamp.now().clock
            let name = level.rawValue.uppercased()
            let painted = level >= .error ? "\u{1B}[31m\(name)\u{1B}[0m" : level >= .warning ? "\u{1B}[33m\(name)\u{1B}[0m" : name
            text = "\(time) \(painted) \(label): \(message)\(fields)\n"
        case .plain:
            text = "\(LogTimestamp.now().iso) \(level.rawValue) \(label): \(message)\(fields)\n"
        }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// sd-daemon(3) prefixes.
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

/// The local time of a log line, formatted by hand: DateFormatter would load ICU's locale and calendar data, about
/// 6 MB of the idle daemon's memory, for two fixed formats.
struct LogTimestamp {
    var parts = tm()
    var milliseconds = 0

    static func now() -> LogTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var stamp = LogTimestamp(milliseconds: spec.tv_nsec / 1_000_000)
        var seconds = spec.tv_sec
        localtime_r(&seconds, &stamp.parts)
        return stamp
    }

    /// 14:03:27.051
    var clock: String {
        "\(Self.digits(parts.tm_hour, 2)):\(Self.digits(parts.tm_min, 2)):\(Self.digits(parts.tm_sec, 2)).\(Self.digits(milliseconds, 3))"
    }

    /// 2026-11-22T14:03:27.051+0100
    var iso: String {
        let offset = parts.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        return "\(Self.digits(parts.tm_year + 1900, 4))-\(Self.digits(parts.tm_mon + 1, 2))-\(Self.digits(parts.tm_mday, 2))T\(clock)"
            + "\(sign)\(Self.digits(abs(offset) / 60, 2))\(Self.digits(abs(offset) % 60, 2))"
    }

    private static func digits(_ value: some BinaryInteger, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

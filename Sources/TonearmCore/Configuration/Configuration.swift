import Foundation
import Playback
import TOMLKit

/// A value from config.toml, kept Sendable and independent of the TOML parser.
public indirect enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case string(String), int(Int), double(Double), bool(Bool)
    case array([ConfigValue])
    case table([String: ConfigValue])

    public var description: String {
        switch self {
        case .string(let s): return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .table(let t): return "{ " + t.keys.sorted().map { "\($0) = \(t[$0]!)" }.joined(separator: ", ") + " }"
        }
    }
}

/// The daemon's settings: every key has a default; config.toml and flags override it.
public struct Configuration: Sendable, Equatable {
    /// Where a setting's value came from, for `tonearm config`.
    public enum Source: String, Sendable { case defaultValue = "default", file, commandLine = "command line" }

    /// A GStreamer pipeline description for the audio output.
    public var audioSink = "autoaudiosink"
    /// How often `Tick` is emitted while playing.
    public var tickInterval: Duration = .seconds(1)
    /// `[playback.replaygain]`: loudness levelling.
    public var replayGain = ReplayGainSettings()
    /// `[playback.equalizer]`: the graphic equalizer and its presets.
    public var equalizer = EqualizerSettings()
    /// `[playback.crossfade]`: overlapping tracks.
    public var crossfade = CrossfadeSettings()
    /// Plugin sections (`[plugins.NAME]`), handed to each plugin untouched.
    public var pluginSections: [String: [String: ConfigValue]] = [:]
    /// `[mpd-protocol]`: the MPD protocol server.
    public var mpdProtocol = MPDProtocolSettings()
    /// `[web]`: the HTTP and WebSocket face.
    public var web = WebSettings()
    /// `[outputs.NAME]`, `output`, `output-retries`, `output-retry-interval`: named outputs.
    public var outputs = OutputSettings()
    /// Where each top-level key came from.
    public var sources: [String: Source] = ["audio-sink": .defaultValue, "tick-interval": .defaultValue]

    public init() {}

    /// Reads a config file; a missing file means all defaults.
    public static func load(from url: URL) throws -> Configuration {
        guard FileManager.default.fileExists(atPath: url.path) else { return Configuration() }
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw TonearmError(.invalidConfig, "cannot read \(url.path) as UTF-8 text")
        }
        return try parse(text, origin: url.path)
    }

    /// Parses TOML text; errors name the place and the fix.
    public static func parse(_ text: String, origin: String = "config.toml") throws -> Configuration {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw TonearmError(.invalidConfig, "\(origin): \(error.description) at line \(error.source.begin.line), column \(error.source.begin.column)")
        }
        var config = Configuration()
        let values = convert(table)
        let top = try ConfigSection(origin + ":", values, known: topLevelKeys)
        if let sink = try top.line("audio-sink") {
            guard !sink.trimmingCharacters(in: .whitespaces).isEmpty else { throw top.fail("audio-sink", "a GStreamer sink line such as \"autoaudiosink\"") }
            config.audioSink = sink
        }
        if values["tick-interval"] != nil {
            let range = tickIntervalRange
            let seconds = try top.number("tick-interval", 1, seconds(range.lowerBound)...seconds(range.upperBound))
            config.tickInterval = try parseTickInterval(seconds: seconds, origin: origin)
        }
        config.outputs.start = try top.line("output")
        config.outputs.recovery.attempts = try top.integer("output-retries", config.outputs.recovery.attempts, 0...100_000)
        if values["output-retry-interval"] != nil {
            let interval = try top.number("output-retry-interval", 1, 0.1...3600)
            config.outputs.recovery.interval = .milliseconds(Int64((interval * 1000).rounded()))
        }
        for (key, value) in values {
            switch (key, value) {
            case ("playback", .table(let playback)):
                let section = try ConfigSection("\(origin): [playback]", playback, known: ["replaygain", "equalizer", "crossfade"])
                if case .table(let table)? = section.table["replaygain"] {
                    config.replayGain = try ReplayGainSettings(section: table, origin: origin)
                    for key in table.keys { config.sources["playback.replaygain.\(key)"] = .file }
                } else if section.table["replaygain"] != nil {
                    throw section.fail("replaygain", "a table such as [playback.replaygain]")
                }
                if case .table(let table)? = section.table["equalizer"] {
                    config.equalizer = try EqualizerSettings(section: table, origin: origin)
                    for key in table.keys { config.sources["playback.equalizer.\(key)"] = .file }
                } else if section.table["equalizer"] != nil {
                    throw section.fail("equalizer", "a table such as [playback.equalizer]")
                }
                if case .table(let table)? = section.table["crossfade"] {
                    config.crossfade = try CrossfadeSettings(section: table, origin: origin)
                    for key in table.keys { config.sources["playback.crossfade.\(key)"] = .file }
                } else if section.table["crossfade"] != nil {
                    throw section.fail("crossfade", "a table such as [playback.crossfade]")
                }
            case ("plugins", .table(let plugins)):
                for (name, section) in plugins {
                    guard case .table(let s) = section else {
                        throw TonearmError(.invalidConfig, "\(origin): [plugins.\(name)] must be a table")
                    }
                    config.pluginSections[name] = s
                }
            case ("mpd-protocol", .table(let section)):
                config.mpdProtocol = try MPDProtocolSettings.parse(section, origin: origin)
            case ("web", .table(let section)):
                config.web = try WebSettings.parse(section, origin: origin)
            case ("outputs", .table(let sections)):
                for (name, section) in sections {
                    guard case .table(let table) = section else {
                        throw TonearmError(.invalidConfig, "\(origin): outputs.\(name) must be a table such as [outputs.\(name)] with kind = \"snapcast-pipe\"")
                    }
                    config.outputs.named.append(try OutputSettings.parse(name: name, table, origin: origin))
                }
            case ("playback", _), ("plugins", _), ("mpd-protocol", _), ("web", _), ("outputs", _):
                let example = ["playback": "[playback.replaygain]", "plugins": "[plugins.NAME]", "outputs": "[outputs.NAME]"][key] ?? "[\(key)]"
                throw top.fail(key, "tables such as \(example)")
            default:
                break // a top-level value, read above
            }
            config.sources[key] = .file
        }
        if let start = config.outputs.start {
            let names = config.outputs.all(audioSink: config.audioSink).map(\.name)
            guard names.contains(start) else {
                throw TonearmError(.invalidConfig, "\(origin): output = \"\(start)\" names no output (outputs: \(names.joined(separator: ", ")))")
            }
        }
        return config
    }

    /// The keys and tables config.toml may have at its top.
    static let topLevelKeys = ["audio-sink", "output", "output-retries", "output-retry-interval", "tick-interval",
                               "outputs", "playback", "plugins", "mpd-protocol", "web"]

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// The allowed range of the tick interval.
    public static let tickIntervalRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(60)

    /// Checks a tick interval given in seconds (from the file or a flag).
    public static func parseTickInterval(seconds: Double, origin: String) throws -> Duration {
        let interval = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        guard seconds.isFinite, tickIntervalRange.contains(interval) else {
            throw TonearmError(.invalidConfig, "\(origin): tick-interval must be between 0.01 and 60 seconds, not \(seconds)")
        }
        return interval
    }

    /// The effective settings as TOML lines, each with where it came from.
    public func describe() -> String {
        var lines = [
            "audio-sink = \(ConfigValue.string(audioSink))  # \(sources["audio-sink"]?.rawValue ?? "default")",
            "tick-interval = \(Double(tickInterval.components.seconds) + Double(tickInterval.components.attoseconds) / 1e18)  # \(sources["tick-interval"]?.rawValue ?? "default")",
        ]
        lines.append("output = \(ConfigValue.string(outputs.start ?? OutputSettings.defaultName))  # \(sources["output"]?.rawValue ?? "default")")
        lines.append("output-retries = \(outputs.recovery.attempts)  # \(sources["output-retries"]?.rawValue ?? "default")")
        lines.append("output-retry-interval = \(Double(outputs.recovery.interval.components.seconds) + Double(outputs.recovery.interval.components.attoseconds) / 1e18)  # \(sources["output-retry-interval"]?.rawValue ?? "default")")
        lines += outputs.describe()
        lines.append("\n[playback.replaygain]")
        lines += replayGain.describe { sources["playback.replaygain.\($0)"] ?? .defaultValue }
        lines.append("\n[playback.equalizer]")
        lines += equalizer.describe { key in
            // A preset's bands, or bands written instead of a preset, come from the file as much as `preset` does.
            let written = sources["playback.equalizer.\(key)"] ?? (key == "preamp" || key == "enabled" ? nil
                : sources["playback.equalizer.preset"] ?? sources["playback.equalizer.bands"])
            return written ?? .defaultValue
        }
        lines.append("\n[playback.crossfade]")
        lines += crossfade.describe { sources["playback.crossfade.\($0)"] ?? .defaultValue }
        lines += mpdProtocol.describe(source: sources["mpd-protocol"]?.rawValue ?? "default")
        lines += web.describe(source: sources["web"]?.rawValue ?? "default")
        for name in pluginSections.keys.sorted() {
            lines.append("\n[plugins.\(name)]")
            for (key, value) in pluginSections[name]!.sorted(by: { $0.key < $1.key }) {
                lines.append("\(key) = \(value)  # file")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func convert(_ table: TOMLTable) -> [String: ConfigValue] {
        var out: [String: ConfigValue] = [:]
        for key in table.keys {
            if let value = table[key].flatMap(convert) { out[key] = value }
        }
        return out
    }

    private static func convert(_ value: TOMLValueConvertible) -> ConfigValue? {
        if let t = value.table { return .table(convert(t)) }
        if let a = value.array { return .array(a.compactMap { convert($0) }) }
        if let b = value.bool { return .bool(b) }
        if let i = value.int { return .int(i) }
        if let d = value.double { return .double(d) }
        if let s = value.string { return .string(s) }
        return nil
    }
}

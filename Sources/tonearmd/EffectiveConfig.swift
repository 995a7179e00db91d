import Foundation
import LocalLibrary
import MIDI
import ReceivedShares
import LocalSend
import Streams
import TonearmCore

/// Every setting the daemon would use, with where its value comes from: what `tonearm config` prints.
struct EffectiveConfig {
    struct Row {
        /// "" for top-level keys, "playback.replaygain", else the plugin's name ("library").
        var section: String
        var key: String
        var value: ConfigValue
        var source: String
    }

    let file: URL
    var rows: [Row] = []
    /// Sections of their own, not a plugin's.
    static let topLevel: Set<String> = ["mpd-protocol", "web"]

    init(_ settings: Configuration, file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.file = file
        let seconds = Double(settings.tickInterval.components.seconds) + Double(settings.tickInterval.components.attoseconds) / 1e18
        rows.append(Row(section: "", key: "audio-sink", value: .string(settings.audioSink), source: settings.sources["audio-sink"]?.rawValue ?? "default"))
        rows.append(Row(section: "", key: "tick-interval", value: .double(seconds), source: settings.sources["tick-interval"]?.rawValue ?? "default"))
        let outputs = settings.outputs
        let interval = Double(outputs.recovery.interval.components.seconds) + Double(outputs.recovery.interval.components.attoseconds) / 1e18
        rows.append(Row(section: "", key: "output", value: .string(outputs.start ?? OutputSettings.defaultName),
                        source: settings.sources["output"]?.rawValue ?? "default"))
        rows.append(Row(section: "", key: "output-retries", value: .int(outputs.recovery.attempts),
                        source: settings.sources["output-retries"]?.rawValue ?? "default"))
        rows.append(Row(section: "", key: "output-retry-interval", value: .double(interval),
                        source: settings.sources["output-retry-interval"]?.rawValue ?? "default"))
        for (key, value) in settings.replayGain.values {
            rows.append(Row(section: "playback.replaygain", key: key, value: value,
                            source: settings.sources["playback.replaygain.\(key)"]?.rawValue ?? "default"))
        }
        for (key, value) in settings.equalizer.values {
            let stored = key.hasPrefix("presets.") ? "presets" : key
            // Writing a preset or bands switches it on: `enabled` then comes from the file too.
            let implied = key == "enabled" ? settings.sources["playback.equalizer.preset"] ?? settings.sources["playback.equalizer.bands"] : nil
            rows.append(Row(section: "playback.equalizer", key: key, value: value,
                            source: (settings.sources["playback.equalizer.\(stored)"] ?? implied)?.rawValue ?? "default"))
        }
        for (key, value) in settings.crossfade.values {
            rows.append(Row(section: "playback.crossfade", key: key, value: value,
                            source: settings.sources["playback.crossfade.\(key)"]?.rawValue ?? "default"))
        }
        for output in outputs.named.sorted(by: { $0.name < $1.name }) {
            for (key, value) in OutputSettings.values(of: output) {
                rows.append(Row(section: "outputs.\(output.name)", key: key, value: value, source: "file"))
            }
        }

        let mpd = settings.mpdProtocol
        var mpdValues: [(String, ConfigValue)] = [("enabled", .bool(mpd.enabled)), ("address", .string(mpd.address)), ("port", .int(mpd.port)),
                                                  ("connection-timeout", .int(mpd.connectionTimeout))]
        if mpd.password != nil { mpdValues.append(("password", .string("(set)"))) }
        if let socket = mpd.unixSocket { mpdValues.append(("unix-socket", .string(socket))) }
        for (key, value) in mpdValues {
            rows.append(Row(section: "mpd-protocol", key: key, value: value, source: settings.sources["mpd-protocol"]?.rawValue ?? "default"))
        }
        let web = settings.web
        var webValues: [(String, ConfigValue)] = [("enabled", .bool(web.enabled)), ("address", .string(web.address)), ("port", .int(web.port)),
                                                  ("allowed-hosts", .array(web.allowedHosts.map(ConfigValue.string)))]
        if web.password != nil { webValues.append(("password", .string("(set)"))) }
        if let certificate = web.certificate { webValues.append(("certificate", .string(certificate))) }
        if let key = web.key { webValues.append(("key", .string(key))) }
        for (key, value) in webValues {
            rows.append(Row(section: "web", key: key, value: value, source: settings.sources["web"]?.rawValue ?? "default"))
        }

        let plugins = try PluginSettings(settings, environment: environment)
        func written(_ name: String) -> [String: ConfigValue] { settings.pluginSections[name] ?? [:] }
        add("library", written("library"), plugins.library.values)
        add("midi", written("midi"), [("folder", .string(plugins.midi.folder.path)), ("soundfont", .string(plugins.midi.soundFont.path))])
        let shares = plugins.shares
        let settle = Double(shares.settle.components.seconds) + Double(shares.settle.components.attoseconds) / 1e18
        add("shares", written("shares"), [
            ("inboxes", .array(shares.inboxes.map { .string($0.path) })), ("received", .string(shares.received.path)),
            ("rejected", .string(shares.rejected.path)), ("import", .string(shares.keep.rawValue)),
            ("on-receive", .string(shares.onReceive.rawValue)), ("settle-seconds", .double(settle)),
        ])
        add("localsend", written("localsend"), plugins.localSend.values)
        add("upnp", written("upnp"), plugins.upnp.values)
        add("scrobble", written("scrobble"), plugins.scrobble.values)
        add("streams", written("streams"), plugins.streams.values)
        for (name, section) in settings.pluginSections.sorted(by: { $0.key < $1.key }) where !PluginSettings.names.contains(name) {
            for (key, value) in section.sorted(by: { $0.key < $1.key }) {
                rows.append(Row(section: name, key: key, value: value, source: "file (no plugin reads it)"))
            }
        }
    }

    /// The effective values of a plugin section (paths expanded); keys in the file but unknown are shown too.
    private mutating func add(_ section: String, _ file: [String: ConfigValue], _ values: [(String, ConfigValue)]) {
        for (key, value) in values {
            rows.append(Row(section: section, key: key, value: value, source: file[key] == nil ? "default" : "file"))
        }
        for (key, value) in file.sorted(by: { $0.key < $1.key }) where !values.contains(where: { $0.0 == key }) {
            rows.append(Row(section: section, key: key, value: value, source: "file (unknown key, ignored)"))
        }
    }

    /// TOML, each value commented with its source.
    var toml: String {
        let exists = FileManager.default.fileExists(atPath: file.path)
        var lines = ["# Tonearm's effective configuration; config file: \(file.path)\(exists ? "" : " (not there: all defaults)")"]
        var section = ""
        for row in rows {
            if row.section != section {
                section = row.section
                // Plugin sections are named by the plugin; the others ("playback.replaygain", "web") by their full path.
                lines.append(section.contains(".") || Self.topLevel.contains(section) ? "\n[\(section)]" : "\n[plugins.\(section)]")
            }
            lines.append("\(row.key) = \(row.value)  # \(row.source)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// {"file": …, "settings": [{"section", "key", "value", "source"}]}.
    var json: String {
        let settings: [[String: Any]] = rows.map {
            ["section": $0.section, "key": $0.key, "value": Self.plain($0.value), "source": $0.source]
        }
        let object: [String: Any] = ["file": file.path, "settings": settings]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func plain(_ value: ConfigValue) -> Any {
        switch value {
        case .string(let s): s
        case .int(let i): i
        case .double(let d): d
        case .bool(let b): b
        case .array(let a): a.map(plain)
        case .table(let t): t.mapValues(plain)
        }
    }
}

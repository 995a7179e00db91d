import Foundation

/// The XDG base directories Tonearm keeps its files in (each with a `tonearm` folder).
public struct XDGDirectories: Sendable, Equatable {
    public var configHome: URL
    public var dataHome: URL
    public var stateHome: URL
    public var cacheHome: URL

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory())
        func dir(_ key: String, _ fallback: String) -> URL {
            // The spec says relative values are invalid and must be ignored.
            if let value = environment[key], value.hasPrefix("/") { return URL(fileURLWithPath: value) }
            return home.appendingPathComponent(fallback)
        }
        configHome = dir("XDG_CONFIG_HOME", ".config")
        dataHome = dir("XDG_DATA_HOME", ".local/share")
        stateHome = dir("XDG_STATE_HOME", ".local/state")
        cacheHome = dir("XDG_CACHE_HOME", ".cache")
    }

    public var configFile: URL { configHome.appendingPathComponent("tonearm/config.toml") }
    public var stateFile: URL { stateHome.appendingPathComponent("tonearm/state.json") }
    public var artCache: URL { cacheHome.appendingPathComponent("tonearm/art") }
    /// Waveform peaks by content (WaveformService).
    public var waveformCache: URL { cacheHome.appendingPathComponent("tonearm/waveforms") }
    public var dataFolder: URL { dataHome.appendingPathComponent("tonearm") }
}

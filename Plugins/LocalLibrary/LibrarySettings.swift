import Foundation
import TonearmCore

/// `[plugins.library]`: the music folders, and what the library does when it starts.
public struct LibrarySettings: Sendable, Equatable {
    public var folders: [URL]
    /// Scan the folders at start (false: large libraries on slow disks wait for `Scan`).
    public var scanOnStart: Bool
    /// Measure the loudness of files with no gain tags, in the background.
    public var measureLoudness: Bool
    /// Keep a listening history (play counts, skips, listens, ratings); false: nothing is recorded.
    public var history: Bool

    public static let keys = ["folders", "scan-on-start", "measure-loudness", "history"]

    /// Reads the section; `folders` defaults to the XDG music folder.
    public init(section: [String: ConfigValue], environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        let s = try ConfigSection("[plugins.library]", section, known: Self.keys, environment: environment)
        folders = try s.paths("folders") ?? [LocalLibrary.defaultMusicFolder(environment: environment)]
        scanOnStart = try s.bool("scan-on-start", true)
        measureLoudness = try s.bool("measure-loudness", true)
        history = try s.bool("history", true)
    }

    /// The effective values, for `tonearm config`.
    public var values: [(String, ConfigValue)] {
        [("folders", .array(folders.map { .string($0.path) })), ("scan-on-start", .bool(scanOnStart)),
         ("measure-loudness", .bool(measureLoudness)), ("history", .bool(history))]
    }
}

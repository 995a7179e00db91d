import Foundation
import TonearmCore

/// `[plugins.midi]`: where the MIDI files are and which SoundFont plays them.
public struct MIDISettings: Sendable, Equatable {
    /// The browser's root folder.
    public var folder: URL
    public var soundFont: URL

    public init(folder: URL, soundFont: URL = SoundFont.debianDefault) {
        self.folder = folder
        self.soundFont = soundFont
    }

    /// Reads the section; `folder` defaults to `MIDI` inside `musicFolder`, `soundfont` to Debian's GM SoundFont.
    public init(section: [String: ConfigValue], musicFolder: URL,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        folder = try Self.path(section, "folder", environment) ?? musicFolder.appendingPathComponent("MIDI")
        soundFont = try Self.path(section, "soundfont", environment) ?? SoundFont.debianDefault
    }

    private static func path(_ section: [String: ConfigValue], _ key: String,
                             _ environment: [String: String]) throws(TonearmError) -> URL? {
        guard let value = section[key] else { return nil }
        guard case .string(var path) = value, !path.isEmpty else {
            throw TonearmError(.invalidConfig, "[plugins.midi] \(key) must be a path, not \(value)")
        }
        if path == "~" || path.hasPrefix("~/") { path = (environment["HOME"] ?? NSHomeDirectory()) + path.dropFirst() }
        guard path.hasPrefix("/") else {
            throw TonearmError(.invalidConfig, "[plugins.midi] \(key) must be an absolute path (or start with ~/), not \"\(path)\"")
        }
        return URL(fileURLWithPath: path).standardizedFileURL
    }
}

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

    public static let keys = ["folder", "soundfont"]

    /// Reads the section; `folder` defaults to `MIDI` inside `musicFolder`, `soundfont` to Debian's GM SoundFont.
    public init(section: [String: ConfigValue], musicFolder: URL,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        let s = try ConfigSection("[plugins.midi]", section, known: Self.keys, environment: environment)
        folder = try s.path("folder") ?? musicFolder.appendingPathComponent("MIDI")
        soundFont = try s.path("soundfont") ?? SoundFont.debianDefault
    }
}

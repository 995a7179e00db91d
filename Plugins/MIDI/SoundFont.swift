import Foundation
import RawPaths
import TonearmCore

/// The SoundFont FluidSynth renders with.
public enum SoundFont {
    /// The General MIDI SoundFont of Debian's `fluid-soundfont-gm`.
    public static let debianDefault = URL(fileURLWithPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2")

    /// Checks that `url` is a readable SoundFont 2 (or 3) file; the error names the path and the fix.
    public static func validate(_ url: URL) throws(TonearmError) {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TonearmError(.soundFontMissing,
                               "the SoundFont \(path) does not exist: install fluid-soundfont-gm or set soundfont in [plugins.midi]")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw TonearmError(.invalidSoundFont, "the SoundFont \(path) is not a file")
        }
        guard let head = RawPath(path).contents(upTo: 12) else {
            throw TonearmError(.invalidSoundFont, "the SoundFont \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        guard head.count == 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("sfbk".utf8) else {
            throw TonearmError(.invalidSoundFont, "the SoundFont \(path) is not a SoundFont 2 file (no RIFF 'sfbk' header)")
        }
    }
}

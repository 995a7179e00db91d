import Foundation
import Lyrics
import LyricsFiles
import MIDI
import RawPaths
import TonearmCore

/// Where the player finds a track's lyrics, in order: the MIDI file's own words, a `.lrc` file beside the track,
/// an ID3v2 SYLT frame, a lyrics tag.
enum LyricsSources {
    static func finder(midi: MIDISource) -> LyricsFinder {
        { metadata in
            // The URI's own bytes: a name that is not UTF-8 has no `URL.path`.
            guard let url = URL(string: metadata.url), let path = RawPath(fileURL: url) else { return nil }
            if let lyrics = await midi.lyrics(for: url) { return lyrics }
            // File reads and TagLib block: on a thread of their own.
            return try? await DispatchQueue.global(qos: .utility).run { LyricsFiles.find(path) }
        }
    }
}

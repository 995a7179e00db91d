import Foundation
import Lyrics
import LyricsFiles
import MIDI
import TonearmCore

/// Where the player finds a track's lyrics, in order: the MIDI file's own words, a `.lrc` file beside the track,
/// an ID3v2 SYLT frame, a lyrics tag.
enum LyricsSources {
    static func finder(midi: MIDISource) -> LyricsFinder {
        { metadata in
            guard let url = URL(string: metadata.url), url.isFileURL else { return nil }
            if let lyrics = await midi.lyrics(for: url) { return lyrics }
            // File reads and TagLib block: on a thread of their own.
            return try? await DispatchQueue.global(qos: .utility).run { LyricsFiles.find(url.path) }
        }
    }
}

import Lyrics

/// The words of a MIDI file, timed by its tempo map: General MIDI Lyric events (FF 05; CR starts a line, LF a
/// paragraph), or the Soft Karaoke text events (FF 01) of a `.kar` file after its `@` header lines (`\` starts a
/// paragraph, `/` a line). Syllables are joined into lines; each keeps its own time as a word.
public enum MIDILyrics {
    /// Starts between syllables this far apart or more begin a new line, in files that mark no line breaks at all.
    static let pauseForLineBreak = 1.2

    /// The lyrics of `file`; nil when it has none. `karaoke`: the file came with a `.kar` name (its text events are
    /// then the words even without an `@K` header).
    public static func extract(_ file: StandardMIDIFile, karaoke: Bool = false) -> Lyrics? {
        var lyricCounts = [Int](repeating: 0, count: file.tracks.count)
        var textCounts = [Int](repeating: 0, count: file.tracks.count)
        var karaokeHeader = karaoke
        var headers: [(letter: Character, value: String)] = []
        for (t, track) in file.tracks.enumerated() {
            for event in track.events {
                guard case .meta(let type, let data) = event.kind else { continue }
                if type == MIDIEvent.Meta.lyric, !strip(data).isEmpty {
                    lyricCounts[t] += 1
                } else if type == MIDIEvent.Meta.text {
                    if data.first == UInt8(ascii: "@") {
                        let text = LegacyText.decode(data.dropFirst())
                        if text.hasPrefix("K") { karaokeHeader = true }
                        if let letter = text.first { headers.append((letter, String(text.dropFirst()).trimmingSpaces())) }
                    } else if !strip(data).isEmpty {
                        textCounts[t] += 1
                    }
                }
            }
        }
        // One track carries the words (the one with the most); other tracks' text is a second voice or comments.
        let type: UInt8
        let counts: [Int]
        if lyricCounts.contains(where: { $0 > 0 }) {
            (type, counts) = (MIDIEvent.Meta.lyric, lyricCounts)
        } else if karaokeHeader, textCounts.contains(where: { $0 > 0 }) {
            (type, counts) = (MIDIEvent.Meta.text, textCounts)
        } else {
            return nil
        }
        let best = counts.max()!
        let index = counts.firstIndex(of: best)!
        let track = file.tracks[index]

        let map: TempoMap
        var offset = 0.0
        if file.format == 2 {
            // Patterns play one after another (as the rendition plays them).
            map = TempoMap(division: file.division, tracks: [track])
            for earlier in file.tracks[..<index] {
                offset += TempoMap(division: file.division, tracks: [earlier]).seconds(atTick: earlier.endTick)
            }
        } else {
            map = TempoMap(file)
        }
        var syllables: [(seconds: Double, bytes: [UInt8])] = []
        for event in track.events {
            guard case .meta(type, let data) = event.kind else { continue }
            if type == MIDIEvent.Meta.text, data.first == UInt8(ascii: "@") { continue }
            syllables.append((offset + map.seconds(atTick: event.tick), data))
        }
        // One encoding for the whole file: a syllable alone may happen to be valid UTF-8 in a Windows-1252 file.
        let utf8 = LegacyText.isUTF8(syllables.flatMap(\.bytes))
        let texts = syllables.map { utf8 ? String(decoding: $0.bytes, as: UTF8.self) : LegacyText.windows1252($0.bytes) }
        let timed = zip(syllables, texts).map { (start: Int64(($0.seconds * 1_000_000).rounded()), text: $1) }
        // Slashes mark lines in karaoke text; some files with Lyric events use them too.
        var lines = Syllables.join(timed, marks: .init(slashes: true, lineFeedIsParagraph: true))
        guard !lines.isEmpty else { return nil }
        if lines.count == 1 { lines = splitAtPauses(lines[0]) }
        let titles = headers.filter { $0.letter == "T" }.map(\.value).filter { !$0.isEmpty }
        return Lyrics(lines: lines, source: .midi, title: titles.first, artist: titles.dropFirst().first)
    }

    /// A file with no break marks at all: lines end where the singing pauses.
    static func splitAtPauses(_ line: LyricLine) -> [LyricLine] {
        guard line.words.count > 1 else { return [line] }
        var lines: [LyricLine] = []
        var words: [LyricWord] = []
        func close() {
            let text = words.map(\.text).joined().trimmingSpaces()
            if !text.isEmpty { lines.append(LyricLine(start: words[0].start, text: text, words: words)) }
            words = []
        }
        for word in line.words {
            if let last = words.last, Double(word.start - last.start) / 1e6 >= pauseForLineBreak { close() }
            words.append(word)
        }
        close()
        return lines
    }

    /// The bytes with control characters and spaces removed: whether a syllable has any words in it.
    static func strip(_ data: [UInt8]) -> [UInt8] {
        data.filter { $0 > 0x20 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") }
    }
}

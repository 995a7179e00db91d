/// One word or syllable of a line, with the moment it is sung.
public struct LyricWord: Sendable, Equatable, Hashable {
    /// Microseconds from the start of the track.
    public var start: Int64
    public var text: String

    public init(start: Int64, text: String) {
        self.start = start
        self.text = text
    }
}

/// One line of lyrics: its text, when it starts (nil when the lyrics are not timed) and, when known, its words' times.
public struct LyricLine: Sendable, Equatable, Hashable {
    /// Microseconds from the start of the track; nil for untimed lyrics.
    public var start: Int64?
    public var text: String
    /// Word (or syllable) times inside the line, in order; empty when the source gives none.
    public var words: [LyricWord]
    /// The line opens a new paragraph or verse (a blank line before it in plain text).
    public var startsParagraph: Bool

    public init(start: Int64?, text: String, words: [LyricWord] = [], startsParagraph: Bool = false) {
        self.start = start
        self.text = text
        self.words = words
        self.startsParagraph = startsParagraph
    }
}

/// The lyrics of a track: lines in the order they are sung, timed or not, and where they came from.
public struct Lyrics: Sendable, Equatable {
    /// Where lyrics were found, in the order the player looks.
    public enum Source: String, Sendable, Equatable, CaseIterable {
        /// Lyric (FF 05) or karaoke text (FF 01) events of a MIDI file.
        case midi
        /// A `.lrc` file beside the track.
        case lrc
        /// An ID3v2 SYLT frame.
        case sylt
        /// A lyrics tag (ID3v2 USLT, Vorbis LYRICS, MP4 ©lyr).
        case tag
    }

    /// Sorted by start time (stable: lines at the same time keep their order in the source) when timed.
    public private(set) var lines: [LyricLine]
    /// Whether every line has a start time.
    public let isSynced: Bool
    public var source: Source
    /// The title and artist the source names (`[ti:]`, `[ar:]`, `@T`), if any.
    public var title: String?
    public var artist: String?

    /// Lines as given; when every line is timed they are sorted stably by start time, else all times are dropped.
    public init(lines: [LyricLine], source: Source, title: String? = nil, artist: String? = nil) {
        let timed = !lines.isEmpty && lines.allSatisfy { $0.start != nil }
        if timed {
            self.lines = lines.enumerated().sorted { ($0.element.start!, $0.offset) < ($1.element.start!, $1.offset) }.map(\.element)
        } else {
            self.lines = lines.map { LyricLine(start: nil, text: $0.text, words: [], startsParagraph: $0.startsParagraph) }
        }
        isSynced = timed
        self.source = source
        self.title = title
        self.artist = artist
    }

    /// Untimed lyrics from plain text: one line per text line; blank lines separate paragraphs.
    public init(plainText: String, source: Source) {
        var lines: [LyricLine] = []
        var paragraph = false
        for raw in plainText.replacingCRLF().split(separator: "\n", omittingEmptySubsequences: false) {
            let text = raw.trimmingSpaces()
            if text.isEmpty {
                paragraph = !lines.isEmpty
                continue
            }
            lines.append(LyricLine(start: nil, text: text, startsParagraph: paragraph))
            paragraph = false
        }
        self.init(lines: lines, source: source)
    }

    public var isEmpty: Bool { lines.isEmpty }

    /// The words as plain text (what MPRIS `xesam:asText` carries): one line each, a blank line between paragraphs.
    public var plainText: String {
        var out: [String] = []
        for line in lines {
            if line.startsParagraph, !out.isEmpty { out.append("") }
            out.append(line.text)
        }
        return out.joined(separator: "\n")
    }

    /// The index of the line being sung at `position` (µs): the last line starting at or before it; nil before the
    /// first line and for untimed lyrics. Of lines starting at the same time the last one is current, as it is the
    /// last to have started.
    public func lineIndex(at position: Int64) -> Int? {
        guard isSynced else { return nil }
        var low = 0
        var high = lines.count
        while low < high {
            let mid = (low + high) / 2
            if lines[mid].start! <= position { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }

    /// When the current line next changes after `position` (µs): the first start later than it; nil when none.
    public func nextChange(after position: Int64) -> Int64? {
        guard isSynced else { return nil }
        var low = 0
        var high = lines.count
        while low < high {
            let mid = (low + high) / 2
            if lines[mid].start! <= position { low = mid + 1 } else { high = mid }
        }
        return low < lines.count ? lines[low].start : nil
    }
}

extension StringProtocol {
    /// The text with CR LF and lone CR line ends as LF.
    public func replacingCRLF() -> String {
        String(self).replacing("\r\n", with: "\n").replacing("\r", with: "\n")
    }

    /// The text without leading and trailing white space and control characters.
    public func trimmingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace || first.value < 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace || last.value < 0x20 { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

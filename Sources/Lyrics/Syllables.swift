/// Joins timed syllables (karaoke MIDI events, syllable-level SYLT frames) into lines; each syllable stays a word.
public enum Syllables {
    /// How a source marks where lines break.
    public struct Marks: Sendable {
        /// A leading `/` starts a line and a leading `\` a paragraph (Soft Karaoke).
        public var slashes: Bool
        /// LF starts a paragraph and CR a line (General MIDI Lyric events); otherwise either starts a line and two
        /// in a row a paragraph.
        public var lineFeedIsParagraph: Bool

        public init(slashes: Bool, lineFeedIsParagraph: Bool) {
            self.slashes = slashes
            self.lineFeedIsParagraph = lineFeedIsParagraph
        }
    }

    /// Lines in syllable order; a line starts with its first syllable. Control characters other than line breaks
    /// are dropped, and so are lines with nothing but spaces.
    public static func join(_ syllables: [(start: Int64, text: String)], marks: Marks) -> [LyricLine] {
        enum Break { case none, line, paragraph }
        var lines: [LyricLine] = []
        var current: LyricLine?
        var pending = Break.none
        func close() {
            if var line = current {
                line.text = line.text.trimmingSpaces()
                if !line.text.isEmpty { lines.append(line) }
            }
            current = nil
        }
        func add(_ piece: Substring, at start: Int64) {
            guard !piece.isEmpty else { return }
            if current == nil {
                guard !piece.trimmingSpaces().isEmpty else { return } // spaces between lines
                current = LyricLine(start: start, text: "", startsParagraph: pending == .paragraph && !lines.isEmpty)
                pending = .none
            }
            current!.text += piece
            if !piece.trimmingSpaces().isEmpty { current!.words.append(LyricWord(start: start, text: String(piece))) }
        }
        func lineBreak(_ kind: Break) {
            // A break right after another (or at the very start of a line) makes it a paragraph.
            let again = current == nil && pending != .none
            close()
            pending = kind == .paragraph || pending == .paragraph || (again && !marks.lineFeedIsParagraph) ? .paragraph : .line
        }
        for (start, raw) in syllables {
            var text = Substring(raw)
            if marks.slashes, let first = text.first, first == "\\" || first == "/" {
                close()
                pending = first == "\\" || pending == .paragraph ? .paragraph : .line
                text = text.dropFirst()
            }
            var piece = Substring()
            for character in text {
                switch character {
                case "\r", "\n", "\r\n":
                    add(piece, at: start)
                    piece = ""
                    lineBreak(marks.lineFeedIsParagraph && character == "\n" ? .paragraph : .line)
                case _ where character.unicodeScalars.allSatisfy({ $0.value < 0x20 }):
                    break
                default:
                    piece.append(character)
                }
            }
            add(piece, at: start)
        }
        close()
        return lines
    }
}

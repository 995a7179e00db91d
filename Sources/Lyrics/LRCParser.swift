/// Reads `.lrc` lyrics: `[mm:ss.xx]` line stamps (several per line, in any order), `[offset:±ms]`, `[ti:]`/`[ar:]`
/// headers, and the enhanced format's `<mm:ss.xx>` word stamps.
public enum LRCParser {
    /// The lyrics in `text`; nil when it holds no line at all. Text without a single line stamp comes back untimed.
    public static func parse(_ text: String, source: Lyrics.Source = .lrc) -> Lyrics? {
        var title: String?
        var artist: String?
        var offset: Int64 = 0
        // Each stamped line, with every stamp it carries.
        var stamped: [(stamps: [Int64], text: String, words: [LyricWord])] = []
        var plain: [String] = []
        var sawStamp = false
        for raw in text.replacingCRLF().split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(raw.trimmingSpaces())
            if rest.first == "\u{FEFF}" { rest = rest.dropFirst() }
            var stamps: [Int64] = []
            var header = false
            while rest.first == "[", let close = rest.firstIndex(of: "]") {
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if let time = timestamp(inside) {
                    stamps.append(time)
                } else if let colon = inside.firstIndex(of: ":"), inside[..<colon].allSatisfy({ $0.isLetter || $0 == "#" }) {
                    let key = inside[..<colon].lowercased()
                    let value = inside[inside.index(after: colon)...].trimmingSpaces()
                    switch key {
                    case "ti": title = value.isEmpty ? title : value
                    case "ar": artist = value.isEmpty ? artist : value
                    case "offset": offset = Int64(value.replacing("+", with: "")) ?? offset
                    default: break
                    }
                    header = true
                } else {
                    break
                }
                rest = rest[rest.index(after: close)...]
            }
            if stamps.isEmpty {
                let line = rest.trimmingSpaces()
                if !header, !line.isEmpty { plain.append(line) }
                continue
            }
            sawStamp = true
            let (lineText, words) = wordStamps(rest)
            stamped.append((stamps, lineText, words))
        }
        guard sawStamp else {
            guard !plain.isEmpty else { return nil }
            var lyrics = Lyrics(plainText: plain.joined(separator: "\n"), source: source)
            lyrics.title = title
            lyrics.artist = artist
            return lyrics
        }
        // A positive offset makes the lyrics come sooner.
        let shift = -offset * 1000
        var lines: [LyricLine] = []
        for entry in stamped {
            let first = entry.stamps[0]
            for stamp in entry.stamps {
                // A line sung again keeps its word timing, moved with the line.
                let words = entry.words.map { LyricWord(start: max(0, $0.start + stamp - first + shift), text: $0.text) }
                lines.append(LyricLine(start: max(0, stamp + shift), text: entry.text, words: words))
            }
        }
        return Lyrics(lines: lines, source: source, title: title, artist: artist)
    }

    /// Whether `text` has at least one LRC line stamp (a lyrics tag holding LRC text).
    public static func hasTimestamps(_ text: String) -> Bool {
        for raw in text.replacingCRLF().split(separator: "\n") {
            let line = Substring(raw.trimmingSpaces())
            if line.first == "[", let close = line.firstIndex(of: "]"),
               timestamp(line[line.index(after: line.startIndex)..<close]) != nil { return true }
        }
        return false
    }

    /// `mm:ss`, `mm:ss.x`, `mm:ss.xx`, `mm:ss.xxx` (or `:` before the fraction) in microseconds.
    static func timestamp(_ text: Substring) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        guard let minutes = digits(parts[0]) else { return nil }
        var secondsPart = parts[1]
        var fraction: Substring = ""
        if parts.count == 3 {
            fraction = parts[2]
        } else if let dot = secondsPart.firstIndex(of: ".") {
            fraction = secondsPart[secondsPart.index(after: dot)...]
            secondsPart = secondsPart[..<dot]
        }
        guard let seconds = digits(secondsPart), seconds < 60 else { return nil }
        var micro: Int64 = 0
        if !fraction.isEmpty || parts.count == 3 || parts[1].contains(".") {
            guard (1...6).contains(fraction.count), let value = digits(fraction) else { return nil }
            var scale: Int64 = 1_000_000
            for _ in 0..<fraction.count { scale /= 10 }
            micro = value * scale
        }
        return (minutes * 60 + seconds) * 1_000_000 + micro
    }

    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }

    /// The line's text without `<mm:ss.xx>` word stamps, and the words they time.
    static func wordStamps(_ text: Substring) -> (String, [LyricWord]) {
        guard text.contains("<") else { return (text.trimmingSpaces(), []) }
        var words: [LyricWord] = []
        var plain = ""
        var current: (start: Int64, text: String)?
        var rest = text
        while !rest.isEmpty {
            if rest.first == "<", let close = rest.firstIndex(of: ">"),
               let time = timestamp(rest[rest.index(after: rest.startIndex)..<close]) {
                if let c = current, !c.text.trimmingSpaces().isEmpty { words.append(LyricWord(start: c.start, text: c.text)) }
                current = (time, "")
                rest = rest[rest.index(after: close)...]
                continue
            }
            let character = rest.removeFirst()
            plain.append(character)
            if current != nil { current!.text.append(character) }
        }
        if let c = current, !c.text.trimmingSpaces().isEmpty { words.append(LyricWord(start: c.start, text: c.text)) }
        return (plain.trimmingSpaces(), words)
    }
}

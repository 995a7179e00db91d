/// The lyrics line of `status --follow`: under the live line on a terminal, a `lyric` key in JSON, a `♪` line in
/// plain text.
extension LiveDisplay {
    /// A new line is being sung (nil: none).
    func showLyric(_ text: String?, _ state: PlayerState) {
        lyric = text
        if live {
            show(state, isTick: false)
        } else if json {
            show(state, isTick: true)
        } else if let text {
            Output.line("♪ " + text)
        }
    }

    /// The second row, drawn from the end of the live line and back to its start; nothing until there is a lyric.
    func drawLyricRow() -> String {
        guard lyric != nil || lyricRow != nil else { return "" }
        let row = lyric.map { StatusLyrics.row($0, columns: Output.terminalColumns ?? 80) } ?? ""
        lyricRow = row
        return "\n\u{1B}[2K" + row + "\u{1B}[1A\r"
    }
}

enum StatusLyrics {
    /// `♪ text`, fitted like the live line.
    static func row(_ text: String, columns: Int) -> String {
        FollowLine.truncate("♪ " + text, to: max(columns - 2, 1))
    }

    /// A `status --json` object with the line being sung (null when none).
    static func json(_ object: JSONValue, lyric: String?) -> JSONValue {
        guard case .object(var members) = object else { return object }
        members.append(("lyric", .string(lyric)))
        return .object(members)
    }
}

import Glibc

/// Colour on a terminal, plain text when piped or when NO_COLOR is set (https://no-color.org).
enum Style {
    static let enabled: Bool = isatty(1) == 1 && getenv("NO_COLOR") == nil && getenv("TERM").map { String(cString: $0) } != "dumb"

    static func accent(_ text: String) -> String { paint(text, "32") }
    static func warning(_ text: String) -> String { paint(text, "33") }
    static func error(_ text: String) -> String { paint(text, "31") }
    static func dim(_ text: String) -> String { paint(text, "2") }
    static func bold(_ text: String) -> String { paint(text, "1") }

    /// The playback status coloured: Playing green, Paused yellow, Stopped dim.
    static func status(_ status: String) -> String {
        switch status {
        case "Playing": accent(status)
        case "Paused": warning(status)
        default: dim(status)
        }
    }

    private static func paint(_ text: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m" + text + "\u{1B}[0m" : text
    }
}

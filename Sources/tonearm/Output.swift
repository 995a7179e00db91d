import Glibc

/// Unbuffered output on the standard streams.
///
/// `print` is buffered when standard output is a pipe, which is wrong for live
/// output (`status --follow | …`), and the C `stdout`/`stderr` globals are not
/// usable from Swift 6 concurrent code; so everything here goes through write(2).
enum Output {
    /// Writes `text` to standard output at once.
    static func out(_ text: String) {
        write(fd: 1, text)
    }

    /// Writes `text` and a newline to standard output at once.
    static func line(_ text: String) {
        write(fd: 1, text + "\n")
    }

    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        write(fd: 2, text + "\n")
    }

    /// True when standard output is a terminal.
    static var stdoutIsTerminal: Bool {
        isatty(1) == 1
    }

    /// The width of the terminal on standard output, if it has one.
    static var terminalColumns: Int? {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 {
            return columns
        }
        return nil
    }

    private static func write(fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

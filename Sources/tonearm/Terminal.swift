import CLinux
import Foundation
import Glibc

/// The terminal in raw mode on the alternate screen, for full-screen commands; `restore()` puts it back.
final class RawTerminal: @unchecked Sendable {
    /// A key a full-screen command understands.
    enum Key: Equatable, Sendable {
        case up, down, left, right, home, end, pageUp, pageDown, enter, backspace, quit
        case character(Character)
    }

    private var saved = termios()
    private var restored = false

    /// Switches standard input to raw mode; nil when standard input or output is not a terminal.
    init?() {
        // A failed init still runs deinit: nothing is to be restored then.
        restored = true
        guard isatty(0) == 1, isatty(1) == 1, tcgetattr(0, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.c_cc.6 = 1 // VMIN
        raw.c_cc.5 = 0 // VTIME
        guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else { return nil }
        restored = false
        Output.out("\u{1B}[?1049h\u{1B}[?25l")
    }

    func restore() {
        guard !restored else { return }
        restored = true
        Output.out("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSAFLUSH, &saved)
    }

    deinit { restore() }

    /// Rows and columns of the terminal.
    var size: (rows: Int, columns: Int) {
        var w = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &w) == 0, w.ws_row > 0, w.ws_col > 0 else { return (24, 80) }
        return (Int(w.ws_row), Int(w.ws_col))
    }

    /// Keys as they are typed, read on a thread of their own (a blocking read must not hold a task thread).
    static func keys() -> AsyncStream<Key> {
        let (stream, continuation) = AsyncStream.makeStream(of: Key.self)
        let thread = Thread {
            _ = tn_name_this_thread("tonearm-keys")
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { continuation.finish(); return }
                for key in parse(Array(buffer[0..<n])) {
                    if case .terminated = continuation.yield(key) { return }
                }
            }
        }
        thread.start()
        return stream
    }

    /// Keys in the bytes of one read: escape sequences of xterm, VT100 and tmux, and plain characters.
    static func parse(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        let sequences: [([UInt8], Key)] = [
            (Array("\u{1B}[A".utf8), .up), (Array("\u{1B}[B".utf8), .down), (Array("\u{1B}[C".utf8), .right),
            (Array("\u{1B}[D".utf8), .left), (Array("\u{1B}OA".utf8), .up), (Array("\u{1B}OB".utf8), .down),
            (Array("\u{1B}OC".utf8), .right), (Array("\u{1B}OD".utf8), .left),
            (Array("\u{1B}[H".utf8), .home), (Array("\u{1B}OH".utf8), .home), (Array("\u{1B}[1~".utf8), .home),
            (Array("\u{1B}[7~".utf8), .home), (Array("\u{1B}[F".utf8), .end), (Array("\u{1B}OF".utf8), .end),
            (Array("\u{1B}[4~".utf8), .end), (Array("\u{1B}[8~".utf8), .end),
            (Array("\u{1B}[5~".utf8), .pageUp), (Array("\u{1B}[6~".utf8), .pageDown),
        ]
        outer: while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x1B {
                for (sequence, key) in sequences where bytes[i...].starts(with: sequence) {
                    keys.append(key)
                    i += sequence.count
                    continue outer
                }
                // A lone Escape quits; an unknown sequence is skipped whole.
                if i + 1 >= bytes.count { keys.append(.quit); return keys }
                i += 2
                while i < bytes.count, !(0x40...0x7E).contains(bytes[i]) { i += 1 }
                i += 1
                continue
            }
            switch byte {
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x03, 0x04: keys.append(.quit) // Ctrl-C, Ctrl-D
            default:
                if byte >= 0x20, byte < 0x7F { keys.append(.character(Character(Unicode.Scalar(byte)))) }
            }
            i += 1
        }
        return keys
    }
}

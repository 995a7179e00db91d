import ArgumentParser
import Foundation

/// `tonearm midi browse`: a full-screen browser of the MIDI folder that opens at the last choice.
struct MIDIBrowse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Browse the MIDI folder in the terminal, starting at the last choice.",
        discussion: """
            ↑/↓ move, PgUp/PgDn page, Enter (or →) opens a folder or plays a file, Backspace (or ←) \
            goes up, Home goes to the top folder, q (or Esc) quits. Needs a terminal; use \
            `tonearm midi ls` in scripts.
            """
    )

    func run() async throws {
        let client = try await BrowserClient.connectToRunningDaemon()
        let place = try await client.resume(root: MIDI.root)
        guard let terminal = RawTerminal() else {
            throw CLIFailure.badArgument("midi browse needs a terminal; use `tonearm midi ls` instead")
        }
        defer { terminal.restore() }
        var screen = MIDIScreen(trail: place.trail, entries: [], selected: 0, top: 0, message: nil)
        screen.entries = try await client.list(root: MIDI.root, path: place.folder)
        screen.select(name: place.selected)
        screen.draw(terminal.size)
        for await key in RawTerminal.keys() {
            do {
                switch key {
                case .quit, .character("q"), .character("Q"):
                    return
                case .up: screen.move(by: -1)
                case .down: screen.move(by: 1)
                case .pageUp: screen.move(by: -(terminal.size.rows - 4))
                case .pageDown: screen.move(by: terminal.size.rows - 4)
                case .end: screen.move(by: screen.entries.count)
                case .enter, .right:
                    guard let entry = screen.current else { break }
                    if entry.folder {
                        try await screen.open(entry.path, name: entry.name, client: client)
                    } else if key == .enter {
                        try await client.play(root: MIDI.root, path: entry.path)
                        screen.message = "▶ Playing \(entry.title ?? entry.name)"
                    }
                case .backspace, .left:
                    try await screen.up(client: client)
                case .home:
                    try await screen.home(client: client)
                case .character:
                    break
                }
            } catch {
                screen.message = "✗ " + ((error as? CLIFailure)?.message ?? "\(error)")
            }
            screen.draw(terminal.size)
        }
    }
}

/// What the browser shows: where it is, the entries, the selection and a status line.
struct MIDIScreen {
    var trail: [(name: String, path: String)]
    var entries: [BrowseEntry]
    var selected: Int
    /// The first entry on screen.
    var top: Int
    var message: String?

    var current: BrowseEntry? { entries.indices.contains(selected) ? entries[selected] : nil }
    var folder: String { trail.last?.path ?? "" }

    mutating func move(by delta: Int) {
        guard !entries.isEmpty else { return }
        selected = min(entries.count - 1, max(0, selected + delta))
    }

    mutating func select(name: String?) {
        selected = name.flatMap { n in entries.firstIndex { $0.name == n } } ?? 0
        top = 0
    }

    mutating func open(_ path: String, name: String, client: BrowserClient) async throws {
        entries = try await client.list(root: MIDI.root, path: path)
        trail.append((name, path))
        select(name: nil)
        message = nil
    }

    mutating func up(client: BrowserClient) async throws {
        guard trail.count > 1 else { return }
        let left = trail.removeLast()
        entries = try await client.list(root: MIDI.root, path: folder)
        select(name: left.name)
        message = nil
    }

    mutating func home(client: BrowserClient) async throws {
        guard trail.count > 1 else { selected = 0; top = 0; return }
        let first = trail[1].name
        trail = [trail[0]]
        entries = try await client.list(root: MIDI.root, path: "")
        select(name: first)
        message = nil
    }

    /// Redraws the whole screen: trail, entries (the selected one highlighted), help or status.
    mutating func draw(_ size: (rows: Int, columns: Int)) {
        let listRows = max(1, size.rows - 3)
        if selected < top { top = selected }
        if selected >= top + listRows { top = selected - listRows + 1 }
        var out = "\u{1B}[H\u{1B}[2J"
        out += "\u{1B}[1m" + fit(MIDI.trailText(trail), size.columns) + "\u{1B}[0m\r\n"
        out += String(repeating: "─", count: size.columns) + "\r\n"
        if entries.isEmpty {
            out += fit("  (no folders or MIDI files here)", size.columns) + "\r\n"
        }
        for index in top..<min(entries.count, top + listRows) {
            let e = entries[index]
            let row = MIDI.row(e)
            let marker = index == selected ? "▸ " : "  "
            let right = row[2]
            var left = marker + row[0]
            if !row[1].isEmpty { left += "  " + row[1] }
            let room = size.columns - TextWidth.of(right) - 1
            var line = fit(left, max(1, room))
            line += String(repeating: " ", count: max(0, room - TextWidth.of(line))) + " " + right
            out += (index == selected ? "\u{1B}[7m" + line + "\u{1B}[0m" : line) + "\r\n"
        }
        out += "\u{1B}[\(size.rows);1H"
        out += fit(message ?? "↑↓ move  Enter open/play  ⌫ up  Home top  q quit", size.columns)
        Output.out(out)
    }

    private func fit(_ text: String, _ columns: Int) -> String {
        guard TextWidth.of(text) > columns else { return text }
        var out = ""
        for character in text {
            if TextWidth.of(out) + TextWidth.width(of: character) > columns - 1 { break }
            out.append(character)
        }
        return out + "…"
    }
}

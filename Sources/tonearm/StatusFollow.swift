import DBus
import Dispatch
import Glibc
import Waveform

/// `tonearm status --follow`: redraws one live line from Tick and PropertiesChanged
/// signals on a terminal; prints one line (or JSON object) per Tick otherwise.
struct StatusFollower {
    let client: PlayerClient
    let json: Bool

    enum Event: Sendable {
        case tick(Tick)
        case properties(PropertyChange)
        case lyric(LyricsLineEvent)
        /// The network buffer's fill level changed.
        case buffering(Int)
        case daemonLeft
        case interrupted
        case connectionLost
        /// The waveform of a track arrived (nil: it cannot be had).
        case waveform(String, WaveformPeaks?)
    }

    func run() async throws {
        let (events, continuation) = AsyncStream<Event>.makeStream()

        // Subscribe first, then read the state, so that nothing falls in between.
        let ticks = client.ticks()
        let changes = client.playerPropertyChanges()
        let departure = client.daemonDeparture()
        let lyricLines = client.lyricsLineChanges()
        let bufferLevels = client.bufferingChanges()
        let feeders = [
            Task {
                for await tick in ticks { continuation.yield(.tick(tick)) }
                continuation.yield(.connectionLost)
            },
            Task {
                for await change in changes { continuation.yield(.properties(change)) }
            },
            Task {
                for await _ in departure { continuation.yield(.daemonLeft) }
            },
            Task {
                for await line in lyricLines { continuation.yield(.lyric(line)) }
            },
            Task {
                for await level in bufferLevels { continuation.yield(.buffering(level.percent)) }
            },
        ]
        let interrupts = InterruptWatch { continuation.yield(.interrupted) }
        defer {
            for feeder in feeders { feeder.cancel() }
            interrupts.cancel()
        }

        guard try await client.isDaemonRunning() else {
            throw CLIFailure.unreachable("the Tonearm daemon left the bus")
        }
        var state = try await client.state()
        state.buffering = await client.buffering()
        let display = LiveDisplay(live: Output.stdoutIsTerminal && !json, json: json)
        display.lyric = (try? await client.lyrics())?.currentLine?.text
        display.begin()
        defer { display.end() }
        display.show(state)
        var waveforms = WaveformFetcher(client: client, enabled: display.live, continuation: continuation)
        waveforms.follow(state.metadata.trackId)
        defer { waveforms.cancel() }

        loop: for await event in events {
            switch event {
            case .tick(let tick):
                state.position = tick.position
                if tick.trackId != (state.metadata.trackId ?? PlayerClient.noTrack) {
                    if let metadata = try? await client.metadata() { state.metadata = metadata }
                }
                if tick.length > 0, tick.trackId == state.metadata.trackId {
                    state.metadata.length = tick.length
                }
                if waveforms.follow(state.metadata.trackId) { display.waveform = nil }
                display.show(state, isTick: true)
            case .properties(let change):
                let previousTrack = state.metadata.trackId
                state.apply(change.changed)
                for name in change.invalidated {
                    if let value = try? await client.playerProperty(name) { state.apply([name: value]) }
                }
                if state.metadata.trackId != previousTrack { state.position = 0 }
                if waveforms.follow(state.metadata.trackId) { display.waveform = nil }
                display.show(state, isTick: false)
            case .waveform(let track, let peaks):
                guard track == state.metadata.trackId else { continue }
                display.waveform = peaks
                display.show(state, isTick: false)
            case .buffering(let level):
                state.buffering = level
                // Off a terminal a line is printed per change too: buffering holds the ticks.
                display.show(state, isTick: true)
            case .lyric(let line):
                display.showLyric(line.index >= 0 ? line.text : nil, state)
            case .daemonLeft:
                display.end()
                Output.error("tonearm: the Tonearm daemon left the bus")
                break loop
            case .interrupted:
                break loop
            case .connectionLost:
                display.end()
                throw CLIFailure.unreachable("lost the connection to the session bus")
            }
        }
    }
}

/// Where `status --follow` draws.
final class LiveDisplay {
    /// Redraw one line in place (a terminal) rather than printing lines.
    let live: Bool
    let json: Bool
    private var ended = false
    /// The current track's waveform, drawn as the progress bar when there is one.
    var waveform: WaveformPeaks?
    /// The line on screen, redrawn on the way out (over a `^C` echo).
    private var lastLine = ""
    /// The lyrics line being sung, drawn under the live line (StatusLyrics.swift).
    var lyric: String?
    var lyricRow: String?

    init(live: Bool, json: Bool) {
        self.live = live
        self.json = json
    }

    func begin() {
        if live { Output.out("\u{1B}[?25l") }
    }

    /// On a terminal every change redraws; otherwise only ticks (and the first state) print.
    func show(_ state: PlayerState, isTick: Bool = true) {
        if live {
            lastLine = FollowLine.render(state, columns: Output.terminalColumns ?? 80, waveform: waveform)
            Output.out("\r\u{1B}[2K" + lastLine + drawLyricRow())
        } else if isTick {
            Output.line(json ? StatusLyrics.json(Status.json(state), lyric: lyric).serialized : FollowLine.render(state, columns: nil))
        }
    }

    /// Leaves the last line standing and gives the cursor back (once).
    func end() {
        guard live, !ended else { return }
        ended = true
        Output.out("\r\u{1B}[2K" + lastLine + (lyricRow.map { "\n\u{1B}[2K" + $0 } ?? "") + "\u{1B}[?25h\n")
    }
}

/// Turns SIGINT and SIGTERM into a call of `handler` instead of death, so the
/// cursor can be restored.
final class InterruptWatch: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

/// The live line: `▶ Artist — Title  [######-----]  1:23 / 4:56`.
enum FollowLine {
    static let barWidth = 20
    static let minimumBarWidth = 10

    static func symbol(for status: String) -> String {
        switch status {
        case "Playing": return "▶"
        case "Paused": return "⏸"
        default: return "■"
        }
    }

    /// The line for `state`, fitted into `columns` (minus two, so that neither the line
    /// nor a `^C` echoed after it wraps) when given.
    static func render(_ state: PlayerState, columns: Int?, waveform: WaveformPeaks? = nil) -> String {
        let metadata = state.metadata
        let name = metadata.displayName ?? (metadata.trackId == nil ? "nothing playing" : "unknown track")
        let length = metadata.length
        var time = "\(TimeText.format(microseconds: state.position)) / "
            + (length.map { TimeText.format(microseconds: $0) } ?? "--:--")
        if state.buffering < 100 { time += "  buffering \(state.buffering)%" }
        let head = symbol(for: state.status) + " "
        guard let columns else {
            return head + name + "  " + bar(state.position, length, width: barWidth) + "  " + time
        }
        let room = max(columns - 2, 1)
        // Shrink the bar, then the name, then drop the bar, then cut the whole line.
        var width = waveform == nil ? barWidth : WaveformBar.width
        func fixed(_ width: Int) -> Int { head.count + 2 + (width + 2) + 2 + time.count }
        while width > minimumBarWidth, fixed(width) + name.count > room { width -= 1 }
        let nameRoom = room - fixed(width)
        let line: String
        if nameRoom >= 8 {
            line = head + truncate(name, to: nameRoom) + "  " + bar(state.position, length, width: width, waveform: waveform) + "  " + time
        } else {
            line = head + truncate(name, to: max(room - head.count - 2 - time.count, 1)) + "  " + time
        }
        return WaveformBar.colour(truncate(line, to: room), state: state, width: width, waveform: waveform)
    }

    static func bar(_ position: Int64, _ length: Int64?, width: Int, waveform: WaveformPeaks? = nil) -> String {
        if let waveform, let cells = WaveformBar.plain(waveform, width: width) { return "[" + cells + "]" }
        var fraction = 0.0
        if let length, length > 0 {
            fraction = min(1, max(0, Double(position) / Double(length)))
        }
        let filled = min(width, Int((fraction * Double(width)).rounded(.down)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    static func truncate(_ text: String, to count: Int) -> String {
        guard text.count > count else { return text }
        guard count > 1 else { return String(text.prefix(max(count, 0))) }
        return String(text.prefix(count - 1)) + "…"
    }
}

/// `tonearm lyrics --follow`: a full-screen view on a terminal, one line per change otherwise.
struct LyricsFollower {
    let client: PlayerClient
    let json: Bool

    enum Event: Sendable {
        case line(LyricsLineEvent)
        case lyrics(PropertyChange)
        case player(PropertyChange)
        case tick(Tick)
        case key(RawTerminal.Key)
        case daemonLeft
        case interrupted
        case connectionLost
    }

    func run() async throws {
        let (events, continuation) = AsyncStream<Event>.makeStream()
        // Subscribe first, then read the state, so that nothing falls in between.
        let lines = client.lyricsLineChanges()
        let lyricsChanges = client.tonearmPropertyChanges()
        let playerChanges = client.playerPropertyChanges()
        let ticks = client.ticks()
        let departure = client.daemonDeparture()
        var feeders = [
            Task {
                for await line in lines { continuation.yield(.line(line)) }
                continuation.yield(.connectionLost)
            },
            Task { for await change in lyricsChanges { continuation.yield(.lyrics(change)) } },
            Task { for await change in playerChanges { continuation.yield(.player(change)) } },
            Task { for await tick in ticks { continuation.yield(.tick(tick)) } },
            Task { for await _ in departure { continuation.yield(.daemonLeft) } },
        ]
        let interrupts = InterruptWatch { continuation.yield(.interrupted) }
        defer {
            for feeder in feeders { feeder.cancel() }
            interrupts.cancel()
        }
        guard try await client.isDaemonRunning() else { throw CLIFailure.unreachable("the Tonearm daemon left the bus") }
        var info = try await client.lyrics()
        var state = try await client.state()

        let terminal = json ? nil : RawTerminal()
        defer { terminal?.restore() }
        if terminal != nil {
            feeders.append(Task { for await key in RawTerminal.keys() { continuation.yield(.key(key)) } })
        }
        let view = LyricsScreen()
        func show() {
            if let terminal { Output.out(view.render(info, state, size: terminal.size)) }
        }
        show()
        if terminal == nil, let line = info.currentLine, info.current >= 0 {
            print(trackId: state.metadata.trackId ?? PlayerClient.noTrack, index: info.current, start: line.start ?? -1, text: line.text)
        }

        loop: for await event in events {
            switch event {
            case .line(let line):
                if line.trackId != state.metadata.trackId, let metadata = try? await client.metadata() { state.metadata = metadata }
                info.current = line.index
                if terminal == nil, line.index >= 0 || json {
                    print(trackId: line.trackId, index: line.index, start: line.start, text: line.text)
                }
                show()
            case .lyrics(let change):
                info.apply(change.changed)
                show()
            case .player(let change):
                let previous = state.metadata.trackId
                state.apply(change.changed)
                if state.metadata.trackId != previous {
                    state.position = 0
                    if let fresh = try? await client.lyrics() { info = fresh }
                }
                show()
            case .tick(let tick):
                state.position = tick.position
                if tick.length > 0 { state.metadata.length = tick.length }
                show()
            case .key(let key):
                switch key {
                case .quit, .character("q"), .character("Q"): break loop
                default: break
                }
            case .daemonLeft:
                terminal?.restore()
                Output.error("tonearm: the Tonearm daemon left the bus")
                break loop
            case .interrupted:
                break loop
            case .connectionLost:
                terminal?.restore()
                throw CLIFailure.unreachable("lost the connection to the session bus")
            }
        }
    }

    private func print(trackId: String, index: Int, start: Int64, text: String) {
        if json {
            Output.line(JSONValue.object([
                ("trackId", .string(trackId)), ("index", .integer(Int64(index))),
                ("start", .number(start >= 0 ? Status.seconds(start) : nil)), ("text", .string(text)),
            ]).serialized)
        } else {
            Output.line("[\(LyricsCommand.stamp(start))] \(text)")
        }
    }
}

/// The full-screen lyrics view: the track on top, the line being sung highlighted with a few lines around it.
struct LyricsScreen {
    /// The whole screen for `info`, as one write.
    func render(_ info: LyricsInfo, _ state: PlayerState, size: (rows: Int, columns: Int)) -> String {
        let width = max(size.columns - 1, 10)
        var rows: [String] = []
        let name = state.metadata.displayName ?? "nothing playing"
        let time = TimeText.format(microseconds: state.position) + " / " + (state.metadata.length.map { TimeText.format(microseconds: $0) } ?? "--:--")
        rows.append(Style.bold(FollowLine.truncate(FollowLine.symbol(for: state.status) + " " + name, to: max(width - time.count - 2, 5)))
                    + "  " + Style.dim(time))
        let about = info.lines.isEmpty ? "no lyrics" : (info.source + (info.synced ? ", timed" : ", not timed"))
        rows.append(Style.dim(about))
        rows.append("")
        let room = max(size.rows - rows.count - 1, 1)
        if !info.lines.isEmpty {
            // The line being sung a third of the way down, so more of what comes is visible than of what went.
            let current = info.current
            let top = max(0, min(current - room / 3, info.lines.count - room))
            for index in top..<min(info.lines.count, top + room) {
                let text = FollowLine.truncate(info.lines[index].text, to: width - 2)
                if index == current {
                    rows.append("▶ " + Style.bold(text))
                } else {
                    rows.append("  " + (current >= 0 && index < current ? Style.dim(text) : text))
                }
            }
        }
        while rows.count < size.rows - 1 { rows.append("") }
        rows.append(Style.dim("q quits"))
        return "\u{1B}[H" + rows.prefix(size.rows).map { $0 + "\u{1B}[K" }.joined(separator: "\r\n")
    }
}

import ArgumentParser

// The transport subcommands: play, pause, toggle, stop, next, prev.

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Start playback, or play the given files or URIs.",
        discussion: """
            With no argument, resumes or starts playback of the queue. With arguments, \
            replaces the queue with them and plays the first: local paths (made absolute and \
            sent as file:// URIs) and URIs such as http://… passed as they are.

            Starts tonearmd when it is not running: the one next to this tonearm, else the \
            one on PATH. With a stream first, waits up to 30 s for it to be heard: a stream \
            that fails is an error, one still silent by then is said so while the player keeps trying.
            """
    )

    @Argument(help: ArgumentHelp("Files or URIs to play, replacing the queue.", valueName: "file-or-uri"))
    var items: [String] = []

    @OptionGroup var output: StateOutput

    func run() async throws {
        // Check every argument before anything is sent.
        let uris = try MediaLocation.uris(for: items)
        let client = try PlayerClient.connect()
        try await client.ensureDaemonRunning()
        if uris.isEmpty {
            try await client.play()
        } else {
            let watch = StreamStart.isStream(uris[0]) ? StreamStart(client: client).watch() : nil
            let ids = try await client.replaceQueue(uris, play: true)
            if let watch {
                defer { watch.stop() }
                // Nothing queued (no id back): nothing to wait for.
                if let first = ids.first {
                    let limit = StreamStart.waitLimit
                    try Self.tell(await watch.outcome(of: first, limit: limit), of: uris, after: limit)
                }
            }
        }
        try await output.report(client)
    }

    /// What the wait for the first stream (`uris[0]`) ended with, said or thrown.
    private static func tell(_ outcome: StreamStart.Outcome, of uris: [String], after limit: Duration) throws {
        switch outcome {
        case .failed(let name, let message):
            // Alone it is the command's failure; with others after it, the player went on to them.
            guard uris.count > 1 else { throw CLIFailure.refused("\(message) (\(name))") }
            Output.error("error: \(message) (\(name))")
        case .daemonLeft:
            throw CLIFailure.unreachable("the Tonearm daemon left the bus before the stream was heard (its log says why)")
        case .undecided:
            // Neither heard nor failed (a slow server, a long buffer): the player keeps at it, and the status printed
            // next would read as if it played.
            Output.error("note: \(uris[0]) not heard after \(limit.components.seconds) s; the player keeps trying (`tonearm status` shows when it plays)")
        case .heard:
            break
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback.")

    @OptionGroup var output: StateOutput

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.pause()
        try await output.report(client)
    }
}

struct Toggle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "toggle", abstract: "Pause when playing, play when paused.")

    @OptionGroup var output: StateOutput

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.playPause()
        try await output.report(client)
    }
}

struct Stop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop playback.")

    @OptionGroup var output: StateOutput

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.stop()
        try await output.report(client)
    }
}

struct Next: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "next", abstract: "Skip to the next track.")

    @OptionGroup var output: StateOutput

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.next()
        try await output.report(client)
    }
}

struct Previous: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prev",
        abstract: "Go back to the previous track.",
        aliases: ["previous"]
    )

    @OptionGroup var output: StateOutput

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        try await client.previous()
        try await output.report(client)
    }
}

/// `--json` for commands that change the player: afterwards, print the state as `status --json` does.
struct StateOutput: ParsableArguments {
    @Flag(name: .long, help: "Afterwards, print the player's state as `status --json` does.")
    var json = false

    func report(_ client: PlayerClient) async throws {
        guard json else { return }
        Output.line(Status.json(try await client.state()).serialized)
    }
}

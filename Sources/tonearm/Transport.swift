import ArgumentParser

// The transport subcommands: play, pause, toggle, stop, next, prev.

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start playback, or play the given files or URIs.",
        discussion: """
            With no argument, resumes or starts playback of the queue. With arguments, \
            replaces the queue with them and plays the first: local paths (made absolute and \
            sent as file:// URIs) and URIs such as http://… passed as they are.

            Starts tonearmd when it is not running: the one next to this tonearm, else the \
            one on PATH.
            """
    )

    @Argument(help: ArgumentHelp("Files or URIs to play, replacing the queue.", valueName: "file-or-uri"))
    var items: [String] = []

    func run() async throws {
        // Check every argument before anything is sent.
        let uris = try MediaLocation.uris(for: items)
        let client = try PlayerClient.connect()
        try await client.ensureDaemonRunning()
        if uris.isEmpty {
            try await client.play()
        } else {
            try await client.replaceQueue(uris, play: true)
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause playback.")

    func run() async throws {
        try await PlayerClient.connectToRunningDaemon().pause()
    }
}

struct Toggle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause when playing, play when paused.")

    func run() async throws {
        try await PlayerClient.connectToRunningDaemon().playPause()
    }
}

struct Stop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop playback.")

    func run() async throws {
        try await PlayerClient.connectToRunningDaemon().stop()
    }
}

struct Next: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Skip to the next track.")

    func run() async throws {
        try await PlayerClient.connectToRunningDaemon().next()
    }
}

struct Previous: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prev",
        abstract: "Go back to the previous track.",
        aliases: ["previous"]
    )

    func run() async throws {
        try await PlayerClient.connectToRunningDaemon().previous()
    }
}

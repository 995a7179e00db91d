import Foundation
import TestSupport
import Testing

/// A detached tmux session on a private server, driven by send-keys and read by capture-pane.
public struct Tmux: Sendable {
    public let socket: String
    public let session = "t"
    /// The pane's size in cells.
    public let columns: Int, rows: Int

    /// A session on the private server `socket` (name it after the test and its process).
    public init(socket: String, columns: Int = 100, rows: Int = 20) {
        self.socket = socket
        self.columns = columns
        self.rows = rows
    }

    /// Starts `command` in a new session. The pane stays after the command ends (remain-on-exit), so a command that
    /// ends early leaves its last screen to read instead of taking the server with it ("server exited unexpectedly").
    public func start(_ command: [String]) async throws {
        let result = try await runProcess("/usr/bin/tmux", ["-L", socket, "-f", "/dev/null", "set-option", "-g", "remain-on-exit", "on", ";",
                                                            "new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows)] + command)
        try #require(result.status == 0, "tmux: \(result.err)")
    }

    /// Sends one key (tmux key name) or literal text.
    public func keys(_ key: String) async throws {
        _ = try await runProcess("/usr/bin/tmux", ["-L", socket, "send-keys", "-t", session, key])
    }

    /// The visible lines.
    public func screen() async throws -> [String] {
        let result = try await runProcess("/usr/bin/tmux", ["-L", socket, "capture-pane", "-p", "-t", session])
        return result.out.components(separatedBy: "\n")
    }

    /// Whether the command in the pane still runs.
    public func isRunning() async throws -> Bool {
        let result = try await runProcess("/usr/bin/tmux", ["-L", socket, "display-message", "-p", "-t", session, "#{pane_dead}"])
        return result.status == 0 && result.out == "0"
    }

    /// Waits (up to 30 s: a loaded machine redraws late) until the screen meets `condition`; records the last screen if not.
    public func waitFor(_ what: String, _ condition: @escaping ([String]) -> Bool) async throws {
        var last: [String] = []
        let ok = try await eventually(timeout: .seconds(30)) {
            last = try await screen()
            return condition(last)
        }
        if !ok {
            let ended = try await isRunning() ? "" : " (the command has ended)"
            Issue.record("tmux: timed out waiting until it \(what)\(ended); screen:\n\(last.joined(separator: "\n"))")
        }
        try #require(ok)
    }

    /// Ends the server and whatever runs in it; synchronous (tmux answers in milliseconds), so it can run in a `defer`.
    /// The client is waited for: dropping it unfinished SIGKILLs it (ChildProcess's deinit) before it has asked, which
    /// left every test's tmux server running after the tests.
    public func killServer() {
        guard let client = try? ChildProcess("/usr/bin/tmux", ["-L", socket, "kill-server"]), let out = client.stdout else { return }
        defer { close(out) }
        // Its stdout reaches the end when it exits; 5 s bounds a client that hangs.
        var end = pollfd(fd: out, events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 512)
        while poll(&end, 1, 5000) > 0, read(out, &buffer, buffer.count) > 0 {}
    }
}

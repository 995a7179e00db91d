import DBus
import Foundation
import Synchronization
import TestSupport

/// Time from the command that opens a file in an idle, running player to the first audio bytes its output
/// writes: the player's audio goes to a FIFO the bench reads, and the figure ends when the first bytes can be
/// read from it. No sound card, so no device latency: this is the player's own path from the command over the
/// bus through decoding to its output.
enum FirstAudio {
    /// The command that opens `file` in the running player, as a user would type it.
    static func openCommand(_ player: Player, file: String, name: String, mpcPort: Int?) -> [[String]]? {
        let uri = URL(fileURLWithPath: file).absoluteString
        switch player.kind {
        case .tonearm:
            guard let cli = player.helper else { return nil }
            return [[cli, "open", file]]
        // mpv and VLC have no command that talks to a running instance: playerctl's OpenUri is how a script opens a file.
        case .mpv, .vlc:
            guard let playerctl = TonearmBench.which("playerctl") else { return nil }
            return [[playerctl, "-p", String(name.dropFirst("org.mpris.MediaPlayer2.".count)), "open", uri]]
        // mpDris2's OpenUri does nothing, so mpd gets mpc, its own command line: add, then play what was added.
        case .mpd:
            guard let mpc = player.mpc, let port = mpcPort else { return nil }
            let base = [mpc, "-q", "-h", "127.0.0.1", "-p", "\(port)"]
            return [base + ["add", URL(fileURLWithPath: file).lastPathComponent], base + ["play"]]
        }
    }

    /// One run: an idle player whose audio goes to a FIFO, then the open command; ms from the command's spawn to
    /// the first bytes in the FIFO.
    static func measure(_ player: Player, file: String, gstRegistry: String) async throws -> Double {
        try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            let fifo = session.home.file("audio.fifo").path
            let reader = try FIFOReader.make(fifo)
            defer { reader.close() }
            let music = URL(fileURLWithPath: file).deletingLastPathComponent().path
            let (_, name) = try await session.launch(player, .fifo(fifo, music: music))
            guard let commands = openCommand(player, file: file, name: name, mpcPort: session.mpdPort.withLock({ $0 })) else {
                throw BenchError("no command opens a file in \(player.label)")
            }
            try await Task.sleep(for: .milliseconds(300))  // let the player settle after taking its name
            let clock = ContinuousClock()
            let start = clock.now
            let arrival = reader.firstBytes(timeout: .seconds(20))
            for command in commands {
                let outcome = try await TimedCommand.run(command[0], Array(command.dropFirst()), environment: session.environment)
                guard outcome.status == 0 else {
                    throw BenchError("\(command.joined(separator: " ")) exited with \(outcome.status): \(outcome.output)\n\(session.playerLog)")
                }
            }
            guard let first = await arrival.value else { throw BenchError("no audio from \(player.label) within 20 s:\n\(session.playerLog)") }
            return (first - start).microseconds / 1000
        }
    }
}

/// The reading end of a FIFO, opened before the player opens it for writing (the bench also holds a writing end,
/// so the reader never sees end-of-file and the player's open never blocks).
final class FIFOReader: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    /// Makes a FIFO at `path` that any user's player can write (mkfifo, then chmod past the umask) and opens it.
    static func make(_ path: String) throws -> FIFOReader {
        guard mkfifo(path, 0o666) == 0 else { throw BenchError("mkfifo \(path): errno \(errno)") }
        _ = chmod(path, 0o666)
        return try FIFOReader(path)
    }

    init(_ path: String) throws {
        readEnd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard readEnd >= 0 else { throw BenchError("open \(path): errno \(errno)") }
        writeEnd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard writeEnd >= 0 else { Glibc.close(readEnd); throw BenchError("open \(path) for writing: errno \(errno)") }
    }

    /// A task that ends with the time bytes first became readable (polled by a thread of its own), or nil.
    func firstBytes(timeout: Duration) -> Task<ContinuousClock.Instant?, Never> {
        let fd = readEnd
        return Task {
            await withCheckedContinuation { continuation in
                Thread {
                    let deadline = ContinuousClock.now + timeout
                    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    while ContinuousClock.now < deadline {
                        if poll(&p, 1, 100) > 0, p.revents & Int16(POLLIN) != 0 {
                            continuation.resume(returning: ContinuousClock.now)
                            return
                        }
                    }
                    continuation.resume(returning: nil)
                }.start()
            }
        }
    }

    /// Reads everything written until `stop()` and what is left after it; the task ends with the bytes.
    func collect() -> Task<[UInt8], Never> {
        let (fd, stopping) = (readEnd, stopping)
        return Task {
            await withCheckedContinuation { continuation in
                Thread {
                    var data = [UInt8](), buffer = [UInt8](repeating: 0, count: 65536)
                    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    while true {
                        let stop = stopping.withLock { $0 }
                        if poll(&p, 1, 50) > 0 {
                            let n = read(fd, &buffer, buffer.count)
                            // Once stopped, one more read and out: a live stream never leaves the FIFO empty.
                            if n > 0 { data += buffer[0..<n]; if !stop { continue } }
                        }
                        if stop { break }
                    }
                    continuation.resume(returning: data)
                }.start()
            }
        }
    }

    /// Ends `collect()` (after at most one more read: a live stream keeps the FIFO full).
    func stop() { stopping.withLock { $0 = true } }

    private let stopping = Flag()
    private final class Flag: Sendable {
        private let value = Mutex(false)
        func withLock<T>(_ body: (inout Bool) -> T) -> T { value.withLock { body(&$0) } }
    }

    func close() {
        Glibc.close(writeEnd)
        Glibc.close(readEnd)
    }
}

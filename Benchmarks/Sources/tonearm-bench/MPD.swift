import Foundation
import TestSupport

/// A private mpd per run: generated config in a temporary folder, loopback only, a free port, null
/// output, no zeroconf; started with `mpd --no-daemon CONFIG` in a process group of its own and
/// stopped at the end of the run, also on errors.
enum MPD {
    /// Cold: `mpc update --wait` on an empty database; warm: the same again with nothing changed.
    /// VmHWM is read after the cold update.
    static func run(mpd: String, mpc: String, folder: String, files: Int, timeout: Duration) async throws -> ScanFigures {
        let dir = TemporaryDirectory("tonearm-bench-mpd")
        Leftovers.add(dir.url.path)
        defer { Leftovers.remove(dir.url.path) }
        let port = try freePort()
        let empty = dir.file("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let prepConfig = dir.file("prepare.conf"), config = dir.file("mpd.conf")
        try self.config(music: empty.path, dir: dir, port: port).write(to: prepConfig, atomically: true, encoding: .utf8)
        try self.config(music: folder, dir: dir, port: port).write(to: config, atomically: true, encoding: .utf8)
        let client = Client(mpc: mpc, port: port)

        // An empty database first: without one mpd would start an update of its own at start-up. It finds none,
        // builds one from the empty folder, and saves it; the real config then starts on that database.
        try await withServer(mpd, prepConfig, dir, client) { _ in
            try await client.run(["update", "--wait"], timeout: timeout)
        }
        guard FileManager.default.fileExists(atPath: dir.file("db").path) else {
            throw BenchError("mpd wrote no database:\n\(log(dir))")
        }
        return try await withServer(mpd, config, dir, client) { server in
            guard try await client.songs() == 0 else { throw BenchError("mpd's database was not empty before the cold update") }
            let clock = ContinuousClock()
            var start = clock.now
            _ = try await client.run(["update", "--wait"], timeout: timeout)
            let cold = clock.now - start
            guard let peak = VmHWM.kilobytes(of: server.pid) else { throw BenchError("cannot read VmHWM of mpd") }
            start = clock.now
            _ = try await client.run(["update", "--wait"], timeout: timeout)
            let warm = clock.now - start
            let songs = try await client.songs()
            guard songs == files else { throw BenchError("mpd's database holds \(songs) songs, not \(files):\n\(log(dir))") }
            return ScanFigures(cold: cold.microseconds / 1e6, warm: warm.microseconds / 1e6, peakKB: peak,
                               note: "start-up not included")
        }
    }

    static func config(music: String, dir: TemporaryDirectory, port: Int) -> String {
        func quote(_ s: String) -> String { "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return """
            music_directory \(quote(music))
            db_file \(quote(dir.file("db").path))
            state_file \(quote(dir.file("state").path))
            pid_file \(quote(dir.file("pid").path))
            log_file \(quote(dir.file("log").path))
            bind_to_address "127.0.0.1"
            port "\(port)"
            zeroconf_enabled "no"
            auto_update "no"
            audio_output {
                type "null"
                name "null"
            }

            """
    }

    /// Starts mpd with `config`, waits until it answers, runs `body`, and stops mpd again (also on errors).
    @discardableResult
    static func withServer<T>(_ mpd: String, _ config: URL, _ dir: TemporaryDirectory, _ client: Client,
                              _ body: (ChildProcess) async throws -> T) async throws -> T {
        let server: ChildProcess
        do {
            server = try ChildProcess(mpd, ["--no-daemon", config.path], captureOutput: false,
                                      outputFile: dir.file("stderr.log").path, processGroup: true)
        } catch {
            throw BenchError("cannot start \(mpd): \(error)")
        }
        do {
            let ready = await eventually(timeout: .seconds(20)) {
                guard server.isRunning else { return false }
                return (try? await client.run(["status"], timeout: .seconds(5))) != nil
            }
            guard ready else { throw BenchError("mpd did not answer on port \(client.port):\n\(log(dir))") }
            let result = try await body(server)
            await server.terminate(grace: .seconds(10))
            return result
        } catch {
            await server.terminate()
            throw error
        }
    }

    static func log(_ dir: TemporaryDirectory) -> String {
        let files = ["log", "stderr.log"].compactMap { try? String(contentsOf: dir.file($0), encoding: .utf8) }
        return String(files.joined(separator: "\n").suffix(2000))
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 && getsockname(fd, $0, &size) == 0 }
        }
        guard bound else { throw BenchError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// mpc against the private mpd.
    struct Client: Sendable {
        let mpc: String
        let port: Int

        /// Runs `mpc -h 127.0.0.1 -p PORT ARGS`; throws unless it exits 0 within `timeout`.
        @discardableResult
        func run(_ arguments: [String], timeout: Duration) async throws -> String {
            let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-bench-mpc-\(UUID().uuidString).err").path
            defer { unlink(errFile) }
            let child = try ChildProcess(mpc, ["-h", "127.0.0.1", "-p", "\(port)"] + arguments, outputFile: errFile)
            async let output = child.readAll()
            let status = await child.wait(timeout: timeout)
            if status == nil { child.kill() }
            let out = await output
            guard status == 0 else {
                let err = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
                throw BenchError("mpc \(arguments.joined(separator: " ")) "
                    + (status.map { "exited with \($0)" } ?? "took longer than \(timeout)") + ": \(err)")
            }
            return out
        }

        /// "Songs: N" from `mpc stats`.
        func songs() async throws -> Int {
            let stats = try await run(["stats"], timeout: .seconds(30))
            guard let line = stats.split(separator: "\n").first(where: { $0.hasPrefix("Songs:") }),
                  let count = Int(line.dropFirst("Songs:".count).trimmingCharacters(in: .whitespaces))
            else { throw BenchError("no song count in mpc stats: \(stats)") }
            return count
        }
    }
}

import Glibc

/// Runs a program to the end and captures its standard output (standard error passes through).
enum Subprocess {
    /// `quietly`: its standard error goes to /dev/null (libraries that chatter, such as ALSA probing devices).
    static func run(_ executable: String, _ arguments: [String], quietly: Bool = false) throws -> (out: String, status: Int32) {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw CLIFailure.refused("cannot make a pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        if quietly { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(pipeFDs[1])
        guard spawned == 0 else {
            close(pipeFDs[0])
            throw CLIFailure.unreachable("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(pipeFDs[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (String(decoding: output, as: UTF8.self), code)
    }

    /// tonearmd, found as `tonearm play` finds it.
    static func daemon() throws -> String {
        guard let path = DaemonLauncher.locate() else {
            throw CLIFailure.unreachable("tonearmd was found neither next to \(DaemonLauncher.ownExecutable() ?? "tonearm") nor on PATH")
        }
        return path
    }
}

import Foundation

/// A real snapserver on free loopback ports, from a generated config (HTTP and JSON-RPC off, no Avahi needed), as an
/// ordinary child process; its source is a FIFO (`pipe://`) or a TCP port it listens on (`tcp://…?mode=server`).
/// Its snapclients write what they play, raw, to files (`--player file`).
public final class Snapcast: @unchecked Sendable {
    public enum Source: Sendable { case pipe, tcp }

    public let folder = TemporaryDirectory("tonearm-snapcast")
    public let source: Source
    /// Where snapclients connect.
    public let streamPort: Int
    /// The FIFO of a pipe source.
    public var fifo: String { folder.file("snapfifo").path }
    /// The port a tcp source listens on for the player.
    public let sourcePort: Int
    public private(set) var server: ChildProcess?
    private var clients: [String: ChildProcess] = [:]
    private var starts = 0

    /// The JSON-RPC port (TCP, newline-delimited), when `control` was asked for.
    public let controlPort: Int?
    /// The MPD server whose metadata snapserver's own control script, meta_mpd.py, reads (nil: no script).
    let mpdPort: Int?

    /// `mpdPort`: run Debian's `meta_mpd.py` against an MPD server there, and open the JSON-RPC port.
    public init(_ source: Source, mpdPort: Int? = nil) async throws {
        self.source = source
        self.mpdPort = mpdPort
        streamPort = try freeLoopbackPort()
        sourcePort = try freeLoopbackPort()
        controlPort = mpdPort == nil ? nil : try freeLoopbackPort()
        try await start()
    }

    /// meta_mpd.py asks localhost:6600 unless told otherwise, and snapserver 0.26 passes a control script no
    /// parameters of ours: a wrapper names the port (and Debian's Python, which has its modules).
    var controlScript: String? {
        guard let mpdPort else { return nil }
        let script = folder.file("meta.sh")
        let text = "#!/bin/sh\nexec /usr/bin/python3 /usr/share/snapserver/plug-ins/meta_mpd.py --mpd-host=127.0.0.1 --mpd-port=\(mpdPort) \"$@\"\n"
        // Written once, through a close-on-exec descriptor: a process another test spawned while the file was open for
        // writing would hold it open, and snapserver's exec of it then failed with "Text file busy".
        if (try? String(contentsOf: script, encoding: .utf8)) != text {
            let fd = open(script.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            if fd >= 0 {
                _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            chmod(script.path, 0o755)
        }
        return script.path
    }

    /// One JSON-RPC call to snapserver's control port; its `result`.
    public func rpc(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        guard let port = controlPort else { throw TestRigError("no control port") }
        guard let fd = connectLoopback(port: port) else { throw TestRigError("snapserver's control port \(port) refused") }
        defer { close(fd) }
        var request = try JSONSerialization.data(withJSONObject: ["id": 1, "jsonrpc": "2.0", "method": method, "params": params])
        request.append(contentsOf: Array("\r\n".utf8))
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        // Notifications (a stream's new properties, say) can come on the same connection before the reply: one JSON
        // object a line; the reply is the line with our id.
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<end]
                pending = Data(pending[(end + 1)...])
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], object["id"] as? Int == 1 {
                    return object["result"] as? [String: Any] ?? [:]
                }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw TestRigError("no reply from snapserver to \(method)") }
            pending.append(contentsOf: buffer[0..<n])
        }
    }

    deinit { stop() }

    var config: String {
        var uri = switch source {
        case .pipe: "pipe://\(fifo)?name=Tonearm&sampleformat=48000:16:2"
        case .tcp: "tcp://127.0.0.1:\(sourcePort)?name=Tonearm&mode=server&sampleformat=48000:16:2"
        }
        if let controlScript { uri += "&controlscript=\(controlScript)" }
        let control = controlPort.map { "enabled = true\nbind_to_address = 127.0.0.1\nport = \($0)" } ?? "enabled = false"
        return """
            [server]
            datadir = \(folder.url.path)
            [http]
            enabled = false
            [tcp]
            \(control)
            [stream]
            bind_to_address = 127.0.0.1
            port = \(streamPort)
            source = \(uri)
            [logging]
            sink = stderr
            filter = *:info

            """
    }

    /// Starts (or starts again) the server and returns once snapclients can connect and its source is open.
    public func start() async throws {
        // A port of ours can be taken meanwhile as the local end of some other loopback connection of the test run
        // (it lies in the ephemeral range; a restart asks for the same one): snapserver then fails to bind and exits.
        // Wait until it is free and start again.
        for attempt in 1...5 {
            let listening = [streamPort] + (controlPort.map { [$0] } ?? []) + (source == .tcp ? [sourcePort] : [])
            _ = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) { listening.allSatisfy(canBindLoopback) }
            do {
                try await launch()
                return
            } catch is TestRigError where attempt < 5 && serverLog.contains("Address already in use") {
                continue
            }
        }
    }

    private func launch() async throws {
        let conf = folder.file("snapserver.conf")
        try config.write(to: conf, atomically: true, encoding: .utf8)
        starts += 1
        // A group of its own: killing the server kills its control script too (meta_mpd.py, orphaned, spins a CPU).
        let process = try ChildProcess(Self.nice, Self.raised + [ChildProcess.which("snapserver"), "-c", conf.path], captureOutput: false,
                                       outputFile: folder.file("server-\(starts).log").path, processGroup: true)
        server = process
        let up = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            guard process.isRunning else { return true }
            guard acceptsConnections(loopbackPort: self.streamPort) else { return false }
            if self.source == .pipe {
                var info = stat()
                return stat(self.fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
            }
            return true
        }
        guard up, process.isRunning else {
            throw TestRigError("snapserver did not start: \(process.writtenOutput.suffix(2000))")
        }
    }

    /// snapserver and snapclient run above the test's CPU burners, in real time (SCHED_FIFO, as audio servers run;
    /// their children, the control script, fall back to normal), else at nice -10 (Debian runs snapclient at -3): on a
    /// machine kept busy their own pacing would otherwise drop or shift the audio they are there to check. Loaded runs
    /// at nice -10 saw both clients play 60 ms of silence in a TCP stream that tonearmd had written seconds ahead,
    /// and 830 ms at the start of a FIFO stream. Only tonearmd then competes with the load, and a gap is its own.
    /// Without the right to raise the priority, nice says so and runs them as they are.
    static let (nice, raised): (String, [String]) = {
        let chrt = ChildProcess.which("chrt")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: chrt)
        probe.arguments = ["-R", "-f", "20", "true"]
        if (try? probe.run()) != nil {
            probe.waitUntilExit()
            if probe.terminationStatus == 0 { return (chrt, ["-R", "-f", "20"]) }
        }
        return (ChildProcess.which("nice"), ["-n", "-10"])
    }()

    /// What the running server logged each time it was late to read its source and moved its clock on ("onResync
    /// (NAME): 281.5 ms"): its clients play silence for that long, and nothing is lost. A writer that lets the source
    /// run dry logs nothing (both measured with snapserver 0.26).
    public var resyncs: [String] {
        serverLog.split(separator: "\n").filter { $0.contains("onResync") }.map(String.init)
    }

    /// What a snapclient logged each time its own playout drifted from the server's time and it re-aligned at once,
    /// inserting silence or dropping frames (snapclient 0.26, at info):
    /// - "pMiniBuffer->full() && (abs(pMiniBuffer->mean()) > 50): -142675": its file player, paced by a timer, drifted
    ///   when a loaded machine woke it late;
    /// - "abs(age > 500): 912940": the chunks' server time jumped. snapserver stamps a pipe source's chunks afresh
    ///   when data comes after more than its dryout_ms (2 s) of none; a client still playing the last silent chunks
    ///   then plays the first 20-40 ms of the new audio, about 0.9 s of silence, and drops one 50 ms request. Seen
    ///   when playback started 2-3 s after tonearmd opened the FIFO (any writer idle that long gets the same).
    /// A source that ran dry makes it log none of these, only a gap at the same frame for every client (measured).
    public func hardSyncs(of client: String) -> [String] {
        clientLog(client).split(separator: "\n").filter { $0.contains("->full() &&") || $0.contains("abs(age > 500)") }.map(String.init)
    }

    /// What a snapclient has logged.
    public func clientLog(_ client: String) -> String {
        (try? String(contentsOf: folder.file("\(client).log"), encoding: .utf8)) ?? ""
    }

    /// What the running server has logged.
    public var serverLog: String { server?.writtenOutput ?? "" }

    /// Whether a listening socket could take 127.0.0.1:`port` now.
    func canBindLoopback(_ port: Int) -> Bool {
        let socket = LoopbackSocket()
        defer { socket.close() }
        return socket.bind(port: port)
    }

    /// Kills the server at once, as a crash would.
    public func kill() {
        server?.kill()
    }

    /// Starts a snapclient writing raw 48 kHz 16-bit stereo to `NAME.raw` and returns that file once the server has
    /// greeted it.
    public func addClient(_ name: String) async throws -> URL {
        let file = folder.file("\(name).raw")
        let process = try spawnClient(name)
        let greeted = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            !process.isRunning || (self.server?.writtenOutput.contains("Hello from \(name)") ?? false)
        }
        guard greeted, process.isRunning else {
            // Both sides: the client's log says whom it reached, the server's whether it was there and busy.
            throw TestRigError("snapclient \(name) did not connect to port \(streamPort): \(process.writtenOutput.suffix(1500))\n"
                               + "snapserver (running: \(server?.isRunning ?? false)): \(serverLog.suffix(2500))")
        }
        return file
    }

    /// Starts snapclient `name` writing to `NAME.raw` (which it truncates) and logging to `NAME.log` (appended).
    private func spawnClient(_ name: String) throws -> ChildProcess {
        let process = try ChildProcess(Self.nice, Self.raised + [ChildProcess.which("snapclient"), "-h", "127.0.0.1", "-p", String(streamPort), "--hostID", name,
                                        "--player", "file:filename=\(folder.file("\(name).raw").path)", "--logsink", "stderr"],
                                       captureOutput: false, outputFile: folder.file("\(name).log").path)
        clients[name] = process
        return process
    }

    /// Starts snapclient `name` again if it has died, and returns how it ended (128 + the signal's number).
    ///
    /// snapclient 0.26 itself now and then dies of SIGSEGV while it reconnects to a server that went away and came back:
    /// the kernel log names the same instruction each time. Measured with snapserver and snapclient alone (a Python
    /// writer in the FIFO, no tonearmd): 2 crashes in about 100 restarts of the server with both CPUs busy. A test of
    /// what comes back after a server's restart starts the client again rather than fail on snapclient's bug.
    public func restartIfDead(_ name: String) throws -> Int32? {
        guard let process = clients[name], let status = process.status else { return nil }
        _ = try spawnClient(name)
        return status
    }

    /// Every snapclient and the server, stopped.
    public func stop() {
        for client in clients.values { client.kill() }
        clients = [:]
        server?.kill()
    }

    /// The samples a client has written so far (interleaved stereo).
    public static func samples(_ file: URL) -> [Int16] {
        guard let data = try? Data(contentsOf: file) else { return [] }
        // Copied into an Int16 array (aligned); the file is little-endian, as is every machine this runs on.
        var samples = [Int16](repeating: 0, count: data.count / 2)
        _ = samples.withUnsafeMutableBytes { data.copyBytes(to: $0) }
        return samples
    }

}

/// How what a snapclient played compares with what was sent: where the sound starts, how much of the expected
/// samples came through exactly, what snapclient's own clock sync changed, and how much of the end is missing.
public struct ReceivedAudio: CustomStringConvertible, Sendable {
    /// A place where the received audio skips ahead (frames dropped) or repeats (frames inserted) against the
    /// expected, as snapclient does to stay in sync when its player wakes late; or silence it played in between.
    public struct Correction: Sendable, CustomStringConvertible {
        /// Frame of the expected audio where it happened.
        public var at: Int
        /// Frames skipped (positive) or repeated (negative) in the expected audio.
        public var shift: Int
        /// Frames of silence inserted there.
        public var silence: Int
        public var description: String { "at \(at): shift \(shift), silence \(silence)" }
    }

    /// Frames of silence before the first sample.
    public var leadingSilence = 0
    /// Frames of the expected audio cut from the start (0: it starts with the first sample sent).
    public var startCut = 0
    /// Frames that match the expected audio exactly.
    public var matching = 0
    /// Frames of the expected audio missing at the end.
    public var tailCut = 0
    /// The first frame (of the expected audio) after which the received audio cannot be found in it any more.
    public var firstDifference: Int?
    /// Non-silent frames after the expected audio ended.
    public var extra = 0
    public var corrections: [Correction] = []

    public var description: String {
        "leading silence \(leadingSilence), start cut \(startCut), matching \(matching), tail cut \(tailCut), first difference \(firstDifference.map(String.init) ?? "none"), extra \(extra), corrections \(corrections)"
    }

    /// Compares interleaved `received` with `expected`, which must not repeat itself (noise, not a sine): the start is
    /// looked for anywhere in it, and after each change the audio is looked for again near where it was.
    public init?(_ received: [Int16], expected: [Int16], channels: Int = 2) {
        guard let first = received.firstIndex(where: { $0 != 0 }) else { return nil }
        let places = Places(expected, channels: channels)
        let start = first - first % channels
        leadingSilence = start / channels
        guard let offset = places.find(received, at: start, around: 0, within: expected.count / channels) else { return nil }
        startCut = offset / channels
        var r = start, e = offset, same = 0
        while r < received.count, e < expected.count {
            if received[r] == expected[e] {
                r += 1
                e += 1
                same += 1
                continue
            }
            if received[r...].allSatisfy({ $0 == 0 }) { break } // the stream went idle: a tail cut
            // Back to the start of this frame, skip any silence played in between, and find where it goes on.
            r -= r % channels
            e -= e % channels
            var silent = r
            while silent < received.count, received[silent] == 0 { silent += 1 }
            silent -= silent % channels
            // Up to a second away (the nearest place wins, so snapclient's own small corrections are found as before):
            // a client whose player drifted far re-aligns at once by as much as it drifted (logged as a hard sync).
            guard let resumed = places.find(received, at: silent, around: e, within: 48000) else {
                firstDifference = e / channels
                break
            }
            corrections.append(Correction(at: e / channels, shift: (resumed - e) / channels, silence: (silent - r) / channels))
            r = silent
            e = resumed
        }
        matching = same / channels
        tailCut = max(0, (expected.count - e) / channels)
        if e >= expected.count, r < received.count { extra = received[r...].filter { $0 != 0 }.count / channels }
    }

    /// Where each stretch of two frames lies in the expected audio, so that received audio is found in it at once.
    struct Places {
        let expected: [Int16]
        let channels: Int
        var offsets: [UInt64: [Int]] = [:]
        static let keyLength = 4
        /// Frames that must match for a place to count: few, since the walk then checks every sample after it, and
        /// a longer stretch would more likely hold one of snapclient's own corrections (it skips or repeats single
        /// frames, and after a late wake-up starts again with silence), so that the place is missed.
        static let probeFrames = 8

        init(_ expected: [Int16], channels: Int) {
            self.expected = expected
            self.channels = channels
            for offset in stride(from: 0, through: expected.count - Self.keyLength, by: channels) {
                offsets[Self.key(expected, offset), default: []].append(offset)
            }
        }

        static func key(_ samples: [Int16], _ at: Int) -> UInt64 {
            (0..<keyLength).reduce(0) { $0 << 16 | UInt64(UInt16(bitPattern: samples[at + $1])) }
        }

        /// Where in `expected`, within `within` frames of `around` (nearest first), the audio at `index` of `received` is.
        func find(_ received: [Int16], at index: Int, around: Int, within: Int) -> Int? {
            let probe = max(Self.keyLength, Self.probeFrames * channels)
            guard index + probe <= received.count else { return nil }
            let low = around - within * channels, high = around + within * channels
            return (offsets[Self.key(received, index)] ?? [])
                .filter { $0 >= low && $0 <= high && $0 + probe <= expected.count }
                .filter { expected[$0..<($0 + probe)].elementsEqual(received[index..<(index + probe)]) }
                .min { abs($0 - around) < abs($1 - around) }
        }
    }
}

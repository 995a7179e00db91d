import DBus
import Foundation
import TestSupport

/// The gapless figure: one continuous signal cut into two WAV files, played one after the other into a file,
/// and the join compared with the original. A swept sine (220 → 1760 Hz) rather than a steady one, so that every
/// stretch of it occurs once and the output can be lined up with it without ambiguity.
enum Gapless {
    static let sampleRate = 44100
    /// Frames per half.
    static let half = 44100
    static let peak = 0.5 * 32767

    /// The whole signal, mono, frames 0..<2·half.
    static func signal() -> [Int16] {
        let (f0, f1, total) = (220.0, 1760.0, Double(2 * half) / Double(sampleRate))
        return (0..<(2 * half)).map { i in
            let t = Double(i) / Double(sampleRate)
            return Int16((peak * sin(2 * .pi * (f0 * t + (f1 - f0) * t * t / (2 * total)))).rounded())
        }
    }

    /// Writes the two halves as 16-bit stereo WAVs; returns their paths.
    static func writeHalves(in folder: URL) throws -> (String, String) {
        let mono = signal()
        func stereo(_ part: ArraySlice<Int16>) -> WAV { WAV(sampleRate: sampleRate, channels: 2, samples: part.flatMap { [$0, $0] }) }
        let a = folder.appendingPathComponent("gapless-a.wav"), b = folder.appendingPathComponent("gapless-b.wav")
        try stereo(mono[0..<half]).write(to: a)
        try stereo(mono[half...]).write(to: b)
        return (a.path, b.path)
    }

    /// Samples (frames) missing (negative) or extra (positive) at the join of `output` (the first channel of what the
    /// player wrote), or why it cannot be told. The output is lined up with the signal at its start; the first
    /// frame where they differ (by more than ±`tolerance`) is where the join went wrong, if anywhere; after it,
    /// the output is lined up with the signal again, and the gap is how far that alignment moved.
    static func gap(_ output: [Int16], tolerance: Int = 4) -> Result<Int, BenchError> {
        let x = signal()
        func matches(_ o: Int, _ r: Int, _ count: Int) -> Bool {
            guard o >= 0, r >= 0, o + count <= output.count, r + count <= x.count else { return false }
            for j in 0..<count where abs(Int(output[o + j]) - Int(x[r + j])) > tolerance { return false }
            return true
        }
        // Line up the start: the first clearly non-silent frame of each.
        guard let firstOut = output.firstIndex(where: { abs(Int($0)) > 1000 }),
              let firstRef = x.firstIndex(where: { abs(Int($0)) > 1000 }),
              let shift = (-3...3).map({ firstOut - firstRef + $0 }).first(where: { matches($0 + firstRef, firstRef, 2048) })
        else { return .failure(BenchError("the output does not reproduce the first track sample for sample")) }
        var p = 0
        while shift + p < output.count, p < x.count, abs(Int(output[shift + p]) - Int(x[p])) <= tolerance { p += 1 }
        if p == x.count { return .success(0) }
        guard p > half / 2 else { return .failure(BenchError("the first track is not reproduced (differs after \(p) frames)")) }
        // Past the mismatch: find where a later stretch of output sits in the signal.
        let window = 2048
        for skip in [0, 441, 4410] {
            guard let u = output[(shift + p)...].indices.dropFirst(skip).first(where: { abs(Int(output[$0])) > 1000 }) else { break }
            let candidates = max(p - window, 0)..<min(x.count - window, p + 5 * sampleRate)
            if let r = candidates.first(where: { matches(u, $0, window) }) {
                return .success((u - r) - shift)
            }
        }
        return .failure(BenchError("the second track is not reproduced sample for sample after the join"))
    }

    /// Plays the two halves through `player` into a file and returns the first channel of what it wrote.
    static func render(_ player: Player, _ a: String, _ b: String, gstRegistry: String) async throws -> [Int16] {
        try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            switch player.kind {
            case .tonearm:
                let out = session.home.file("gapless.wav")
                let sink = "\(Session.pcmCaps) ! wavenc ! filesink location=\(out.path)"
                let child = try session.spawn(player.executable, ["--audio-sink", sink])
                session.playerProcesses.withLock { $0 = [child] }
                let name = player.busName
                guard await eventually(timeout: .seconds(30), { (try? await session.client.nameHasOwner(name)) == true }) else {
                    throw BenchError("tonearmd did not come on the bus:\n\(session.playerLog)")
                }
                _ = try await session.client.call(destination: name, path: Session.mprisPath, interface: "org.tonearm.Player1",
                                                  member: "ReplaceQueue", arguments: [.stringArray([a, b].map { URL(fileURLWithPath: $0).absoluteString }), .bool(true)])
                // Done when it is Stopped again with more than the first track written (it may start and finish
                // between two polls: the file sink is not synchronised to a clock).
                let done = await eventually(timeout: .seconds(60)) {
                    let size = (try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0
                    guard size > half * 4 else { return false }
                    return (try? await session.client.getProperty(destination: name, path: Session.mprisPath, interface: Session.playerInterface,
                                                                  name: "PlaybackStatus"))?.stringValue == "Stopped"
                }
                guard done else {
                    throw BenchError("tonearm did not stop after the two tracks:\n\(session.playerLog)")
                }
                await child.terminate()
                return try WAV.read(out).mono
            case .mpv:
                let out = session.home.file("gapless.wav")
                let child = try session.spawn(player.executable, [
                    "--no-config", "--no-video", "--ao=pcm", "--ao-pcm-file=" + out.path, "--gapless-audio=yes",
                    "--audio-format=s16", "--audio-samplerate=44100", "--audio-channels=stereo", a, b])
                guard await child.wait(timeout: .seconds(60)) == 0 else { throw BenchError("mpv failed:\n\(child.writtenOutput.suffix(1000))") }
                return try WAV.read(out).mono
            case .vlc:
                // VLC's file output reopens (and truncates) its file for each track, so it writes into a FIFO the
                // bench reads from start to end: the bytes of both tracks, as they left VLC.
                let fifo = session.home.file("gapless.fifo").path
                let reader = try FIFOReader.make(fifo)
                defer { reader.close() }
                let collected = reader.collect()
                let child = try session.spawn(player.executable, [
                    "-I", "dummy", "--no-video", "--aout", "afile", "--audiofile-file", fifo, "--no-audiofile-wav",
                    "--audiofile-format", "s16", "--audiofile-channels", "2", "--play-and-exit", a, b], asUser: true)
                let status = await child.wait(timeout: .seconds(60))
                reader.stop()
                let bytes = await collected.value
                guard status == 0 else { throw BenchError("vlc failed:\n\(child.writtenOutput.suffix(1000))") }
                return WAV(raw: Data(bytes), sampleRate: sampleRate, channels: 2).mono
            case .mpd:
                let out = session.home.file("gapless.raw").path
                let music = URL(fileURLWithPath: a).deletingLastPathComponent().path
                let processes = try await session.startMPD(player, music: music, output: MPDPlayer.pipeOutput(to: out),
                                                           before: [["update", "--wait"], ["add", URL(fileURLWithPath: a).lastPathComponent],
                                                                    ["add", URL(fileURLWithPath: b).lastPathComponent], ["play"]])
                guard let mpc = player.mpc, let port = session.mpdPort.withLock({ $0 }) else { throw BenchError("no mpd") }
                let client = MPD.Client(mpc: mpc, port: port)
                let stopped = try await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
                    try await !client.run(["status"], timeout: .seconds(10)).contains("[playing]")
                }
                guard stopped else { throw BenchError("mpd did not stop after the two tracks") }
                // mpd closes the output (and so the pipe to cat) after it stops; stop it to be sure, then let cat finish.
                for process in processes.reversed() { await process.terminate(grace: .seconds(10)) }
                try await Task.sleep(for: .milliseconds(200))
                let raw = try Data(contentsOf: URL(fileURLWithPath: out))
                return WAV(raw: raw, sampleRate: sampleRate, channels: 2).mono
            }
        }
    }
}

import DBus
import Foundation
import TestSupport

/// ReplayGain figures: loudness measurement speed of tonearm's worker (`tonearmd --measure-loudness`, libebur128 on
/// GStreamer's PCM, as the library runs it in the background) beside Debian's `loudgain` and GStreamer's
/// `rganalysis` on the same files, all at nice 19 as the worker runs; and the CPU of playback with ReplayGain off
/// and on (a file tagged -6 dB, played to a clock-synchronised null sink).
struct LoudnessBench: Sendable {
    let tonearm: Player
    let tonearmd: String
    let runs: Int
    let files: Int
    /// Seconds of audio per file.
    let seconds: Int
    let cpuWindow: Duration
    let gstRegistry: String
    let scratch: URL

    struct Figures: Sendable {
        var tonearm: [Double] = []
        var loudgain: [Double] = []
        var rganalysis: [Double] = []
        var loudgainStatus: String?
        var cpuOff: [Double] = []
        var cpuOn: [Double] = []
    }

    func measure() async throws -> Figures {
        let folder = scratch.appendingPathComponent("loudness")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        log("generating \(files) FLAC files of \(seconds) s for the loudness figures")
        var paths: [String] = []
        let buffers = seconds * 44100 / 1024
        for i in 0..<files {
            let path = folder.appendingPathComponent("track \(i).flac").path
            let wave = ["pink-noise", "sine", "square", "white-noise"][i % 4]
            try await gst(["audiotestsrc", "wave=\(wave)", "volume=\(0.2 + 0.1 * Double(i % 6))", "num-buffers=\(buffers)", "!",
                           "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!", "flacenc", "!", "filesink", "location=\(path)"])
            paths.append(path)
        }
        var figures = Figures()
        let loudgain = TonearmBench.which("loudgain")
        if loudgain == nil { figures.loudgainStatus = "not installed" }
        for run in 1...runs {
            log("loudness run \(run)/\(runs)")
            figures.tonearm.append(try await timed(tonearmd, ["--measure-loudness"] + paths))
            if let loudgain { figures.loudgain.append(try await timed("/usr/bin/nice", ["-n", "19", loudgain, "-a", "-s", "s"] + paths)) }
            // rganalysis: one gst-launch per file (it measures one stream per pipeline); its album figure needs them
            // in one pipeline, which gst-launch cannot chain from files.
            let clock = ContinuousClock()
            let start = clock.now
            for path in paths {
                _ = try await timed("/usr/bin/nice", ["-n", "19", "gst-launch-1.0", "-q", "filesrc", "location=\(path)", "!", "decodebin", "!",
                                                      "audioconvert", "!", "audioresample", "!", "rganalysis", "!", "fakesink"])
            }
            figures.rganalysis.append((clock.now - start).microseconds / 1e6)
        }

        let tagged = folder.appendingPathComponent("tagged -6 dB.flac").path
        try await gst(["audiotestsrc", "wave=pink-noise", "volume=0.4", "num-buffers=\(120 * 44100 / 1024)", "!", "audio/x-raw,rate=44100,channels=2", "!",
                       "audioconvert", "!", "taginject", "tags=replaygain-track-gain=-6.0", "!", "flacenc", "!", "filesink", "location=\(tagged)"])
        for run in 1...runs {
            log("ReplayGain CPU run \(run)/\(runs)")
            figures.cpuOff.append(try await playbackCPU(tagged, mode: "off"))
            figures.cpuOn.append(try await playbackCPU(tagged, mode: "track"))
        }
        return figures
    }

    private func gst(_ arguments: [String]) async throws {
        let (_, err, status) = try await runProcess("gst-launch-1.0", ["-q"] + arguments)
        guard status == 0 else { throw BenchError("gst-launch failed: \(err)") }
    }

    /// Wall-clock seconds of a command; throws when it fails.
    private func timed(_ executable: String, _ arguments: [String]) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let (_, err, status) = try await runProcess(executable, arguments)
        guard status == 0 else { throw BenchError("\(executable) failed (\(status)): \(err.prefix(200))") }
        return (clock.now - start).microseconds / 1e6
    }

    /// CPU seconds per second of playing, with the given ReplayGain mode.
    private func playbackCPU(_ file: String, mode: String) async throws -> Double {
        try await Session.with(gstRegistry: gstRegistry) { s in
            let config = URL(fileURLWithPath: s.environment["XDG_CONFIG_HOME"]!).appendingPathComponent("tonearm/config.toml")
            try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "[playback.replaygain]\nmode = \"\(mode)\"\n[plugins.library]\nscan-on-start = false\nmeasure-loudness = false\n"
                .write(to: config, atomically: true, encoding: .utf8)
            let (_, name) = try await s.launch(tonearm, .tonearmSink("fakesink sync=true"))
            _ = try await s.client.call(destination: name, path: Session.mprisPath, interface: "org.tonearm.Player1",
                                        member: "ReplaceQueue", arguments: [.stringArray([URL(fileURLWithPath: file).absoluteString]), .bool(true)])
            try await s.waitUntilPlaying(name)
            try await Task.sleep(for: .seconds(1))
            let processes = s.playerProcesses.withLock { $0 }
            let clock = ContinuousClock()
            let start = clock.now
            let before = ProcessStats.cpuSeconds(processes)
            try await Task.sleep(for: cpuWindow)
            let used = ProcessStats.cpuSeconds(processes) - before
            return used / ((clock.now - start).microseconds / 1e6)
        }
    }

    func markdown(_ f: Figures) -> [String] {
        let audio = Double(files * seconds)
        func rate(_ values: [Double]) -> String { values.isEmpty ? "–" : String(format: "%.1f", Double(files) / Stats.median(values)) }
        func speed(_ values: [Double]) -> String { values.isEmpty ? "–" : String(format: "%.0f×", audio / Stats.median(values)) }
        func ratio(_ peer: [Double]) -> String {
            guard !f.tonearm.isEmpty, !peer.isEmpty else { return "–" }
            return String(format: "%.2f", Stats.median(f.tonearm) / Stats.median(peer))
        }
        let off = f.cpuOff.isEmpty ? nil : Stats.median(f.cpuOff), on = f.cpuOn.isEmpty ? nil : Stats.median(f.cpuOn)
        let cpu: (Double?) -> String = { $0.map { String(format: "%.2f %%", $0 * 100) } ?? "–" }
        return [
            "",
            "## ReplayGain",
            "",
            "Measurement: \(files) generated FLAC files of \(seconds) s (44.1 kHz stereo; pink noise, sine, square, white "
                + "noise), integrated loudness and peak of each and of all as an album; wall-clock time of one run of each "
                + "tool over all files, every tool at nice 19 as tonearm's worker runs (tonearm: `tonearmd "
                + "--measure-loudness`, libebur128 on GStreamer's PCM, sample peak; loudgain: `loudgain -a -s s`, ffmpeg + "
                + "libebur128, true peak; rganalysis: one `gst-launch-1.0 … rganalysis` per file, ReplayGain 1, no album). "
                + "Ratios are tonearm's time over the peer's: below 1 tonearm is faster. Higher files/s is better.",
            "",
            "| metric | tonearm | loudgain | rganalysis | tonearm/loudgain | tonearm/rganalysis |",
            "|---|---:|---:|---:|---:|---:|",
            "| files/s | \(rate(f.tonearm)) | \(f.loudgainStatus ?? rate(f.loudgain)) | \(rate(f.rganalysis)) | – | – |",
            "| × real time | \(speed(f.tonearm)) | \(f.loudgainStatus ?? speed(f.loudgain)) | \(speed(f.rganalysis)) | – | – |",
            "| time for all (s) | \(f.tonearm.isEmpty ? "–" : String(format: "%.2f", Stats.median(f.tonearm))) | "
                + "\(f.loudgainStatus ?? (f.loudgain.isEmpty ? "–" : String(format: "%.2f", Stats.median(f.loudgain)))) | "
                + "\(f.rganalysis.isEmpty ? "–" : String(format: "%.2f", Stats.median(f.rganalysis))) | \(ratio(f.loudgain)) | \(ratio(f.rganalysis)) |",
            "",
            "Playback CPU: tonearmd playing a FLAC file tagged -6 dB to `fakesink sync=true`, CPU time over \(cpuWindow) of "
                + "playing (all threads), ReplayGain mode off (the gain filter passes the samples through) and track "
                + "(every sample scaled).",
            "",
            "| metric | ReplayGain off | ReplayGain track | ratio (on/off) |",
            "|---|---:|---:|---:|",
            "| CPU while playing (% of one core) | \(cpu(off)) | \(cpu(on)) | "
                + "\(off.flatMap { o in on.map { String(format: "%.2f", $0 / max(o, 1e-9)) } } ?? "–") |",
        ]
    }
}

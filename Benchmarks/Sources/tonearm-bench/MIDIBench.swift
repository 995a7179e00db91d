import DBus
import Foundation
import TestSupport

/// MIDI figures: listing a folder of MIDI files with their metadata (Browser1.List), and rendering a long SMF
/// to a WAV file through tonearmd (midiparse + fluiddec) beside the `fluidsynth` command-line renderer on the
/// same file and SoundFont.
struct MIDIBench: Sendable {
    static let soundFont = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    let tonearm: Player
    let runs: Int
    let files: Int
    /// Minutes of music in the long file.
    let minutes: Int
    let fluidsynth: String?
    /// What the fluidsynth column says when it is not measured ("skipped", "not installed").
    let fluidsynthAbsence: String
    let gstRegistry: String
    let scratch: URL

    struct Figures: Sendable {
        var listCold: [Double] = []
        var listWarm: [Double] = []
        var renderTonearm: [Double] = []
        var renderFluidsynth: [Double] = []
        var fluidsynthFailure: String?
    }

    func measure() async throws -> Figures {
        let folder = scratch.appendingPathComponent("midi-folder")
        log("generating \(files) MIDI files in \(folder.path)")
        try Self.generateFolder(count: files, in: folder)
        let long = scratch.appendingPathComponent("long.mid")
        try Self.longSong(minutes: minutes).write(to: long)

        var figures = Figures()
        for run in 1...runs {
            log("MIDI run \(run)/\(runs): listing \(files) files")
            let (cold, warm) = try await list(folder)
            figures.listCold.append(cold)
            figures.listWarm.append(warm)
            log("MIDI run \(run)/\(runs): rendering \(minutes) min")
            figures.renderTonearm.append(try await renderTonearm(long))
            if let fluidsynth, figures.fluidsynthFailure == nil {
                do { figures.renderFluidsynth.append(try await renderFluidsynth(fluidsynth, long)) } catch {
                    figures.fluidsynthFailure = "\(error)"
                }
            }
        }
        return figures
    }

    /// Seconds for the first and the second listing of the folder by a fresh daemon.
    private func list(_ folder: URL) async throws -> (Double, Double) {
        try await Session.with(gstRegistry: gstRegistry) { s in
            try configure(s, folder: folder)
            let (_, name) = try await s.launch(tonearm, .idle)
            var times: [Double] = []
            for _ in 0..<2 {
                let clock = ContinuousClock()
                let start = clock.now
                let reply = try await s.client.call(destination: name, path: Session.mprisPath, interface: "org.tonearm.Browser1",
                                                    member: "List", arguments: [.string("midi"), .string("")], timeout: .seconds(300))
                times.append((clock.now - start).microseconds / 1e6)
                let count = reply.first?.arrayValue?.count ?? 0
                guard count == files else { throw BenchError("List returned \(count) entries, expected \(files)") }
            }
            return (times[0], times[1])
        }
    }

    /// Seconds from ReplaceQueue to Stopped, rendering to a WAV file as fast as the pipeline goes.
    private func renderTonearm(_ file: URL) async throws -> Double {
        try await Session.with(gstRegistry: gstRegistry) { s in
            let out = s.home.file("tonearm.wav")
            let sink = "\(Session.pcmCaps) ! wavenc ! filesink location=\(out.path)"
            let (_, name) = try await s.launch(tonearm, .tonearmSink(sink))
            let clock = ContinuousClock()
            let start = clock.now
            _ = try await s.client.call(destination: name, path: Session.mprisPath, interface: "org.tonearm.Player1",
                                        member: "ReplaceQueue", arguments: [.stringArray([file.absoluteString]), .bool(true)])
            let stopped = await eventually(timeout: .seconds(600), interval: .milliseconds(5)) {
                (try? await s.client.getProperty(destination: name, path: Session.mprisPath, interface: Session.playerInterface,
                                                 name: "PlaybackStatus"))?.stringValue == "Stopped"
            }
            let elapsed = (clock.now - start).microseconds / 1e6
            guard stopped else { throw BenchError("tonearm did not finish rendering") }
            let seconds = (try? WAV.read(out).seconds) ?? 0
            guard abs(seconds - Double(minutes * 60)) < 1 else { throw BenchError("tonearm rendered \(seconds) s, expected \(minutes * 60)") }
            return elapsed
        }
    }

    private func renderFluidsynth(_ fluidsynth: String, _ file: URL) async throws -> Double {
        let out = scratch.appendingPathComponent("fluidsynth.wav")
        let clock = ContinuousClock()
        let start = clock.now
        let (_, err, status) = try await runProcess(fluidsynth, ["-ni", "-q", "-g", "0.2", "-r", "44100", "-F", out.path,
                                                                 Self.soundFont, file.path])
        let elapsed = (clock.now - start).microseconds / 1e6
        guard status == 0 else { throw BenchError("fluidsynth failed (\(status)): \(err.suffix(300))") }
        return elapsed
    }

    private func configure(_ s: Session, folder: URL) throws {
        let config = URL(fileURLWithPath: s.environment["XDG_CONFIG_HOME"]!).appendingPathComponent("tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.midi]\nfolder = \"\(folder.path)\"\n[plugins.library]\nscan-on-start = false\n"
            .write(to: config, atomically: true, encoding: .utf8)
    }

    // MARK: Generated files

    /// Songs of 3 tracks (a tempo track and two instruments), about 1–3 KB each, like a folder of pop songs.
    static func generateFolder(count: Int, in folder: URL) throws {
        let fm = FileManager.default
        if let existing = try? fm.contentsOfDirectory(atPath: folder.path), existing.count == count { return }
        try? fm.removeItem(at: folder)
        try fm.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 0..<count {
            let notes = 40 + i % 120
            let tracks = [
                Ev.name("Song \(i)") + Ev.tempo(0, bpm: Double(90 + i % 60)) + Ev.meta(0, 0x58, [4, 2, 24, 8]) + Ev.end(notes * 96),
                Ev.program(0, channel: 0, UInt8(i % 128)) + Ev.notes(notes, ticks: 96, key: UInt8(48 + i % 24)) + Ev.end(),
                Ev.program(0, channel: 1, UInt8((i + 33) % 128)) + Ev.notes(notes / 2, ticks: 192, channel: 1, key: 36) + Ev.end(),
            ]
            try SMFBytes(format: 1, division: 96, tracks: tracks).write(to: folder.appendingPathComponent(String(format: "song %05d.mid", i)))
        }
    }

    /// `minutes` of four voices in eighth notes at 120 beats per minute.
    static func longSong(minutes: Int) -> SMFBytes {
        let eighths = minutes * 60 * 4
        var tracks = [Ev.name("Long song") + Ev.tempo(0, bpm: 120) + Ev.end(eighths * 48)]
        for voice in 0..<4 {
            let channel = UInt8(voice)
            var body = Ev.program(0, channel: channel, [0, 32, 48, 73][voice])
            for n in 0..<eighths {
                let key = UInt8(48 + voice * 7 + (n * (voice + 3)) % 12)
                body += Ev.on(0, channel: channel, key, 90) + Ev.off(48, channel: channel, key)
            }
            tracks.append(body + Ev.end())
        }
        return SMFBytes(format: 1, division: 96, tracks: tracks)
    }

    // MARK: Report

    func markdown(_ f: Figures, fluidsynthVersion: String) -> [String] {
        func cell(_ values: [Double], _ transform: (Double) -> Double = { $0 }) -> String {
            values.isEmpty ? "–" : String(format: "%.2f", transform(Stats.median(values)))
        }
        let music = Double(minutes * 60)
        let ours = f.renderTonearm.isEmpty ? nil : Stats.median(f.renderTonearm)
        let theirs = f.renderFluidsynth.isEmpty ? nil : Stats.median(f.renderFluidsynth)
        let peer = fluidsynth == nil ? fluidsynthAbsence : f.fluidsynthFailure.map { "failed: \($0.prefix(80))" } ?? cell(f.renderFluidsynth)
        let ratio = ours.flatMap { o in theirs.map { String(format: "%.2f", o / $0) } } ?? "–"
        let speed: (Double?) -> String = { $0.map { String(format: "%.0f×", music / $0) } ?? "–" }
        return [
            "",
            "## MIDI",
            "",
            "Listing: `Browser1.List` of a folder of \(files) generated MIDI files (format 1, 3 tracks each) with their "
                + "metadata, by a fresh daemon (first listing: every file read and parsed; second: unchanged files "
                + "remembered). Rendering: a \(minutes)-minute, 4-voice SMF to a WAV file, as fast as it goes, SoundFont "
                + "FluidR3_GM; tonearm from ReplaceQueue to Stopped (midiparse + fluiddec, SoundFont load included), "
                + "fluidsynth as `fluidsynth -ni -F out.wav` (SoundFont load included). Lower is better.",
            "",
            "| metric | tonearm | fluidsynth | ratio (tonearm/fluidsynth) |",
            "|---|---:|---:|---:|",
            "| list \(files) MIDI files, first (s) | \(cell(f.listCold)) | – | – |",
            "| list \(files) MIDI files, again (s) | \(cell(f.listWarm)) | – | – |",
            "| listing rate, first (files/s) | \(f.listCold.isEmpty ? "–" : String(format: "%.0f", Double(files) / Stats.median(f.listCold))) | – | – |",
            "| render \(minutes) min of MIDI (s) | \(cell(f.renderTonearm)) | \(peer) | \(ratio) |",
            "| render speed (× real time) | \(speed(ours)) | \(speed(theirs)) | – |",
            "",
            "- fluidsynth: \(fluidsynthVersion)",
        ]
    }
}

import DBus
import Foundation
import TestSupport

/// The main table's figures for every player: start-up, call latency beside the bus's floor, playerctl,
/// control-to-signal latency, memory and CPU, the gapless join and open-to-first-audio.
struct Bench: Sendable {
    struct Settings: Sendable {
        var runs: Int
        var calls: Int
        var clients: Int
        /// How long CPU time is counted while playing, per run.
        var cpuWindow: Duration
        /// How long an idle player is left after taking its name before its RSS is read.
        var idleSettle: Duration
        var toggles: Int
        var seeks: Int
        var playerctlRuns: Int
    }

    /// The files played: a 60 s sine, the two halves of the gapless signal, all in one folder (mpd's music folder),
    /// and two broken files named as Ogg (random bytes, and nothing) to start with before the sine.
    struct Media: Sendable {
        var track: String
        var broken: [String]
        var gaplessA: String
        var gaplessB: String
        /// The same sine encoded, for the memory and CPU of decoding it; a format GStreamer could not encode is nil.
        var ogg: String?
        var mp3: String?
    }

    let players: [Player]
    let settings: Settings
    let media: Media
    /// A GStreamer registry shared by the runs (built by the warm-up start), as on any machine
    /// where GStreamer has run before; `.coldStartup` runs without it.
    let gstRegistry: String

    /// Runs are interleaved (tonearm, mpv, vlc, mpd, tonearm, …) so drift on the machine hits all alike.
    /// A failing tonearm fails the bench; a failing peer is reported and left out.
    func measure() async throws -> Results {
        var results = Results()
        // One untimed start each, so the first timed one does not pay for a cold page cache.
        for player in players {
            do {
                _ = try await Session.with(gstRegistry: gstRegistry, for: player) { try await $0.launch(player, .idle).0 }
            } catch {
                try fail(player, error, &results)
            }
        }
        for run in 1...settings.runs {
            for player in players where results.failures[player.label] == nil {
                let clock = ContinuousClock()
                let started = clock.now
                do {
                    let figures = try await measureRun(player, &results)
                    results.add(player.label, figures)
                    let summary = Metric.playback.compactMap { m in figures[m].map { "\(m.label(clients: settings.clients)) \(format($0))" } }
                    log("run \(run)/\(settings.runs) \(player.label) (\(format((clock.now - started).microseconds / 1e6)) s): "
                        + summary.joined(separator: "; "))
                } catch {
                    try fail(player, error, &results)
                }
            }
        }
        return results
    }

    private func fail(_ player: Player, _ error: any Error, _ results: inout Results) throws {
        if player.kind == .tonearm { throw error }
        log("\(player.label) could not be measured: \(error)")
        results.failures[player.label] = "\(error)".split(separator: "\n").first.map(String.init) ?? "failed"
        results.samples[player.label] = nil
    }

    /// One run of one player. Figures the player cannot give are noted in `results` (and left out).
    private func measureRun(_ player: Player, _ results: inout Results) async throws -> [Metric: Double] {
        var figures: [Metric: Double] = [:]
        let settle = settings.idleSettle
        if !(await MachineQuiet.wait(limit: settle * 5)) { log("\(player.label): the machine was not quiet before its start") }
        let (startup, rssIdle) = try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            let startup = try await session.launchAndAsk(player, .idle, ask: true)
            try await Task.sleep(for: settle)
            return (startup, ProcessStats.residentMiB(session.playerProcesses.withLock { $0 }))
        }
        figures[.startup] = startup.name.microseconds / 1000
        if let answer = startup.answer { figures[.startupAnswer] = answer.microseconds / 1000 }
        figures[.rssIdle] = rssIdle
        await MachineQuiet.wait(limit: settle * 5)
        let cold = try await Session.with(gstRegistry: nil, for: player) { try await $0.launch(player, .idle).0 }
        figures[.coldStartup] = cold.microseconds / 1000
        await MachineQuiet.wait(limit: settle * 5)
        let coldTrack = try await Session.with(gstRegistry: nil, for: player) {
            try await $0.launchAndAsk(player, .playing(media.track), ask: false, track: true).track
        }
        if let coldTrack { figures[.coldSpawnToMetadata] = coldTrack.microseconds / 1000 } else {
            results.note(player.label, .coldSpawnToMetadata, "no track in Metadata")
        }
        try await brokenFirst(player, &figures, &results)
        for (metric, busy) in [(Metric.startSlowestCall, 0), (.startSlowestCallBusy, ProcessInfo.processInfo.activeProcessorCount)] {
            await MachineQuiet.wait(limit: settle * 5)
            do {
                figures[metric] = try await StartCalls.slowest(player, track: media.track, gstRegistry: gstRegistry, busy: busy)
            } catch {
                log("\(player.label): \(metric.label(clients: settings.clients)) not measured: \(error)")
                results.note(player.label, metric, "n/a: " + firstLine(error))
            }
        }

        let playing = try await Session.with(gstRegistry: gstRegistry, for: player) { session in
            try await playingFigures(player, session)
        }
        figures.merge(playing.0) { $1 }
        for (metric, note) in playing.1 { results.note(player.label, metric, note) }
        for (file, rss, cpu) in [(media.ogg, Metric.rssPlayingOgg, Metric.cpuPerMinuteOgg), (media.mp3, .rssPlayingMP3, .cpuPerMinuteMP3)] {
            guard let file else {
                for metric in [rss, cpu] { results.note(player.label, metric, "n/a: GStreamer could not encode the file") }
                continue
            }
            await MachineQuiet.wait(limit: settle * 5)
            let (memory, seconds) = try await Session.with(gstRegistry: gstRegistry, for: player) { session in
                try await decodingFigures(player, session, file: file)
            }
            figures[rss] = memory
            figures[cpu] = seconds
        }

        do {
            figures[.openToAudio] = try await FirstAudio.measure(player, file: media.track, gstRegistry: gstRegistry)
        } catch {
            log("\(player.label): open → first audio not measured: \(error)")
            results.note(player.label, .openToAudio, "n/a: " + firstLine(error))
        }
        do {
            let output = try await Gapless.render(player, media.gaplessA, media.gaplessB, gstRegistry: gstRegistry)
            switch Gapless.gap(output) {
            case .success(let gap): figures[.gaplessGap] = Double(gap)
            case .failure(let why): results.note(player.label, .gaplessGap, "n/a: " + why.description)
            }
        } catch {
            log("\(player.label): gapless join not measured: \(error)")
            results.note(player.label, .gaplessGap, "n/a: " + firstLine(error))
        }
        return figures
    }

    /// A start with the broken files before the sine: when the first call is answered, and when Metadata names the
    /// sine. A player that cannot be given them (mpd, see `startMPD`) gets "n/a" and why.
    private func brokenFirst(_ player: Player, _ figures: inout [Metric: Double], _ results: inout Results) async throws {
        await MachineQuiet.wait(limit: settings.idleSettle * 5)
        let good = URL(fileURLWithPath: media.track).deletingPathExtension().lastPathComponent
        do {
            let launched = try await Session.with(gstRegistry: gstRegistry, for: player) {
                try await $0.launchAndAsk(player, .playing(media.track, after: media.broken), ask: true, track: true, trackNamed: good)
            }
            if let answer = launched.answer { figures[.brokenAnswer] = answer.microseconds / 1000 }
            if let track = launched.track { figures[.brokenToMetadata] = track.microseconds / 1000 } else {
                results.note(player.label, .brokenToMetadata, "the good file never in Metadata")
            }
        } catch {
            if player.kind == .tonearm { throw error }
            log("\(player.label): the start with broken files not measured: \(error)")
            for metric in [Metric.brokenAnswer, .brokenToMetadata] { results.note(player.label, metric, "n/a: " + firstLine(error)) }
        }
    }

    /// RSS and CPU per minute while the player plays `file` (the sine, encoded), counted as for the WAV.
    private func decodingFigures(_ player: Player, _ session: Session, file: String) async throws -> (Double?, Double) {
        let name = try await session.launchAndAsk(player, .playing(file), ask: false).busName
        try await session.waitUntilPlaying(name)
        await session.waitUntilHeard(name)
        let (cpu, rss) = try await playbackCost(session.playerProcesses.withLock { $0 })
        return (rss, cpu)
    }

    /// CPU per minute over `cpuWindow` and RSS after it, of a player that is playing: playback, not the start, so a
    /// player's one-off work after its first audio (tonearm's lyrics look-up and library scan in the background,
    /// measured at about 1 s of CPU in the first seconds) is left out by waiting first.
    private func playbackCost(_ processes: [ChildProcess]) async throws -> (cpuPerMinute: Double, rss: Double?) {
        try await Task.sleep(for: settings.cpuWindow < .seconds(5) ? .milliseconds(500) : .seconds(3))
        let clock = ContinuousClock()
        let (cpu0, t0) = (ProcessStats.cpuSeconds(processes), clock.now)
        try await Task.sleep(for: settings.cpuWindow)
        let (cpu1, t1) = (ProcessStats.cpuSeconds(processes), clock.now)
        return ((cpu1 - cpu0) / ((t1 - t0).microseconds / 1e6) * 60, ProcessStats.residentMiB(processes))
    }

    /// The figures taken while the player plays the 60 s track: CPU and RSS first (nothing else going on), then
    /// the calls, playerctl, and the control latencies. Also returns notes for figures it could not take.
    private func playingFigures(_ player: Player, _ session: Session) async throws -> ([Metric: Double], [Metric: String]) {
        var figures: [Metric: Double] = [:], notes: [Metric: String] = [:]
        let launched = try await session.launchAndAsk(player, .playing(media.track), ask: false, track: true)
        let name = launched.busName
        if let track = launched.track {
            figures[.spawnToMetadata] = track.microseconds / 1000
        } else {
            notes[.spawnToMetadata] = "no track in Metadata"
        }
        try await session.waitUntilPlaying(name)
        await session.waitUntilHeard(name)
        let cost = try await playbackCost(session.playerProcesses.withLock { $0 })
        figures[.cpuPerMinute] = cost.cpuPerMinute
        figures[.rssPlaying] = cost.rss

        let floor = try await CallLatency.sequential(session.client, .busGetId, calls: settings.calls)
        let single = try await CallLatency.sequential(session.client, .position(name), calls: settings.calls)
        let (floorAll, floorRate) = try await CallLatency.concurrent(address: session.bus.address, .busGetId,
                                                                     clients: settings.clients, calls: settings.calls)
        let (all, rate) = try await CallLatency.concurrent(address: session.bus.address, .position(name),
                                                           clients: settings.clients, calls: settings.calls)
        figures[.floorP50] = Stats.percentile(floor, 0.5)
        figures[.floorP99] = Stats.percentile(floor, 0.99)
        figures[.p50] = Stats.percentile(single, 0.5)
        figures[.p99] = Stats.percentile(single, 0.99)
        figures[.floorConcurrentP50] = Stats.percentile(floorAll, 0.5)
        figures[.concurrentP50] = Stats.percentile(all, 0.5)
        figures[.concurrentP99] = Stats.percentile(all, 0.99)
        figures[.concurrentShare] = rate / floorRate * 100

        if let playerctl = TonearmBench.which("playerctl") {
            var walls: [Double] = []
            let suffix = String(name.dropFirst("org.mpris.MediaPlayer2.".count))
            for _ in 0..<settings.playerctlRuns {
                let outcome = try await TimedCommand.run(playerctl, ["-p", suffix, "status"], environment: session.environment)
                guard outcome.status == 0, outcome.output == "Playing" else {
                    throw BenchError("playerctl -p \(suffix) status: \(outcome.status) \(outcome.output)")
                }
                walls.append(outcome.wall.microseconds / 1000)
            }
            figures[.playerctlStatus] = Stats.median(walls)
        } else {
            notes[.playerctlStatus] = "n/a: playerctl not installed"
        }

        let control = try await ControlLatency.measure(session, name, toggles: settings.toggles, seeks: settings.seeks)
        if !control.playPauseReply.isEmpty { figures[.playPauseReply] = Stats.median(control.playPauseReply) }
        if control.playPause.isEmpty {
            notes[.playPauseMedian] = "no signal"
            notes[.playPauseP90] = "no signal"
        } else {
            figures[.playPauseMedian] = Stats.median(control.playPause)
            figures[.playPauseP90] = Stats.percentile(control.playPause, 0.9)
        }
        for (metric, times, missing) in [(Metric.seekPlaying, control.seekPlaying, control.seekPlayingMissing),
                                         (.seekPaused, control.seekPaused, control.seekPausedMissing),
                                         (.setPositionPlaying, control.setPositionPlaying, control.setPositionPlayingMissing),
                                         (.setPositionPaused, control.setPositionPaused, control.setPositionPausedMissing)] {
            // A player that leaves most seeks unannounced does not send Seeked there: its few signals are no figure.
            if times.isEmpty || missing * 2 > settings.seeks {
                notes[metric] = times.isEmpty ? "no signal" : "no signal for \(missing) of \(settings.seeks)"
            } else {
                figures[metric] = Stats.median(times)
                if missing > 0 { notes[metric] = "\(missing) of \(settings.seeks) without Seeked" }
            }
        }
        return (figures, notes)
    }
}

func firstLine(_ error: any Error) -> String {
    "\(error)".split(separator: "\n").first.map(String.init) ?? "failed"
}

func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Three significant digits-ish: 1234, 123, 12.3, 1.23.
func format(_ value: Double) -> String {
    let digits = abs(value) >= 100 ? 0 : abs(value) >= 10 ? 1 : 2
    return String(format: "%.\(digits)f", value)
}

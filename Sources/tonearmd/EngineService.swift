import Dispatch
import Foundation
import Logging
import Playback
import ServiceLifecycle
import Synchronization
import TonearmCore

/// Builds the GStreamer engine (registry, playbin, the sink: the slowest part of a start, and 3 MiB of a daemon's 10)
/// on a thread of its own, when there is something to play, and attaches it to the deferred engine, through which the
/// player answers meanwhile. An output that cannot be built ends the daemon the graceful way, and `failure` says why.
final class EngineService: DaemonService {
    let deferred: DeferredEngine
    let output: AudioOutput
    /// What the engine must set on GStreamer elements (the MIDI synthesizer's SoundFont, the streams' trust).
    let elementSettings: [String: [String: String]]
    let shutdown: Shutdown
    let logger: Logger
    private let failed = Mutex<String?>(nil)
    /// Reached once the start's GStreamer set-up is over: the engine attached, or not buildable, or left until
    /// something is to be heard.
    let settled = Milestone()

    init(deferred: DeferredEngine, output: AudioOutput, elementSettings: [String: [String: String]], shutdown: Shutdown,
         logger: Logger) {
        self.deferred = deferred
        self.output = output
        self.elementSettings = elementSettings
        self.shutdown = shutdown
        self.logger = logger
    }

    var description: String { "engine" }

    /// Why the audio output could not be built, if it could not.
    var failure: String? { failed.withLock { $0 } }

    /// Starts building the engine now (`now`: the command line named files, queued by then) or once the player first
    /// has something to be heard: an idle daemon (a restored queue holds
    /// paused) never sets GStreamer up, and an output that cannot be built is then found at that first Play. As a
    /// service it only holds its place in the group until shutdown.
    func begin(now: Bool) {
        guard !now else { return startBuilding() }
        deferred.buildWhenNeeded { [self] in startBuilding() }
        settled.reach()
    }

    /// Called once: at the start, or by the deferred engine (which asks once).
    private func startBuilding() {
        logger.debug("building the audio engine")
        // Not awaited: GStreamer's set-up cannot be cancelled, and a shutdown meanwhile must not wait for it (the
        // deferred engine, shut down by then, shuts an engine attached late down at once).
        Task.detached(priority: .userInitiated) { await self.build() }
    }

    func run() async {
        try? await gracefulShutdown()
    }

    private func build() async {
        let (output, elementSettings) = (output, elementSettings)
        let gate = ProcessInfo.processInfo.environment["TONEARM_ENGINE_GATE"]
        do {
            let engine = try await DispatchQueue.global().run {
                // For tests: an engine made slow on purpose starts once this file exists.
                if let gate { while access(gate, F_OK) != 0 { usleep(5_000) } }
                return try PlaybackEngine(output: output, logger: Logger(label: "tonearm.playback"), elementSettings: elementSettings)
            }
            deferred.attach(engine)
            logger.info("audio engine ready")
            settled.reach()
        } catch {
            settled.reach()
            let named = output.name == OutputSettings.defaultName ? "" : " (output \(output.name))"
            failed.withLock { $0 = "cannot build the audio output '\(output.detail)'\(named): \(error)" }
            shutdown.request()
        }
    }
}

import Foundation
import Playback

/// Where the outputs stand: which can be switched to, and the current one's trouble.
struct OutputState {
    var configured: [AudioOutput] = []
    /// Why the current output takes no audio ("" while it does).
    var problem = ""
    /// The current output failed and the engine holds playback paused on a silent stand-in.
    var lost = false
    /// Play again once the lost output is back: it was playing when it failed, or Play came meanwhile.
    var resumeWhenBack = false
    var attempts = 0
    /// When a reconnect last brought the output back: a failure soon after it goes on counting attempts (an output
    /// that opens and then fails at once must not be retried for ever).
    var backAt: ContinuousClock.Instant?
    var retry: Task<Void, Never>?
    /// An output is being opened (a switch or a reconnect): one at a time.
    var opening = false
    /// The config's `output`, saved with a live switch.
    var configuredStart: String?
    /// The output last switched to live, kept in the state file.
    var chosen: SavedOutput?
}

/// An output as the faces list it.
public struct OutputDescription: Sendable, Equatable {
    public var name: String
    /// local, snapcast-pipe, snapcast-tcp or pipeline.
    public var kind: String
    /// Where it goes: a device, a FIFO, a host and port, a sink line.
    public var detail: String
}

/// Outputs: switching while playing, and reconnecting one that went away (snapserver stopped).
extension Player {
    /// The outputs the player can switch to.
    public var outputs: [OutputDescription] {
        outputState.configured.map { OutputDescription(name: $0.name, kind: $0.kindName, detail: $0.detail) }
    }
    /// The name of the output audio goes to.
    public var outputName: String { engine.output.name }
    /// Why the current output takes no audio; "" while it does.
    public var outputProblem: String { outputState.problem }

    /// Switches to the output named `name`: the track and position stay, after a short gap. An output that cannot
    /// be opened is `OutputUnavailable` and playback stays where it was. Switching to the current output opens it
    /// again (after it was lost: at once, without waiting for the next reconnect).
    public func setOutput(_ name: String) async throws {
        guard let output = outputState.configured.first(where: { $0.name == name }) else {
            throw TonearmError(.noSuchOutput, "no output named '\(name)' (outputs: \(outputState.configured.map(\.name).joined(separator: ", ")))")
        }
        guard !outputState.opening else { throw TonearmError(.busy, "an output is being opened; try again in a moment") }
        outputState.opening = true
        let opened = await open(output)
        outputState.opening = false
        guard !isShutDown else { return }
        switch opened {
        case .failure(let error):
            logger.error("cannot switch to the output \(name): \(error.message)")
            throw TonearmError(.outputUnavailable, "cannot switch to the output '\(name)': \(error.message)")
        case .success(let prepared):
            logger.notice("output: \(output)")
            outputState.attempts = 0
            outputState.backAt = nil
            outputState.chosen = SavedOutput(name: name, configured: outputState.configuredStart)
            use(prepared)
            scheduleSave()
        }
    }

    /// Opens an output off the actor (a TCP connect may take up to a second).
    private func open(_ output: AudioOutput) async -> Result<PreparedOutput, PlaybackError> {
        let engine = self.engine
        return await Task.detached {
            do {
                return .success(try engine.prepareOutput(output))
            } catch let error as PlaybackError {
                return .failure(error)
            } catch {
                return .failure(PlaybackError(domain: OutputConnection.domain, code: 0, message: "\(error)"))
            }
        }.value
    }

    /// Moves playback onto an opened output; a lost one's playback resumes if it was playing.
    private func use(_ prepared: PreparedOutput) {
        let paused: Bool? = outputState.lost ? !outputState.resumeWhenBack : nil
        outputState.retry?.cancel()
        outputState.retry = nil
        outputState.lost = false
        outputState.problem = ""
        outputState.resumeWhenBack = false
        engine.useOutput(prepared, paused: paused)
        emitWithState(.outputChanged(name: prepared.output.name, problem: ""))
        followStatus()
        publish()
    }

    /// The engine lost the output (or could not open it at start) and holds playback paused: say why, and
    /// reconnect.
    func outputFailed(_ output: AudioOutput, _ error: PlaybackError, wasPlaying: Bool) {
        guard output.name == engine.output.name, !isShutDown else { return }
        outputState.lost = true
        outputState.resumeWhenBack = outputState.resumeWhenBack || wasPlaying
        if status == .playing {
            // Started playing after the engine parked (an output that could not open at start, with the saved queue
            // restored meanwhile): nothing is heard, so it holds paused too, and plays once the output is back.
            engine.pause()
            outputState.resumeWhenBack = true
        }
        if let back = outputState.backAt, ContinuousClock.now - back < .seconds(10) {
            logger.warning("the output \(output.name) failed again \(ContinuousClock.now - back) after it came back")
        } else {
            outputState.attempts = 0
        }
        outputState.problem = "\(output.name): \(error.message); reconnecting"
        logger.error("the output \(output.name) failed: \(error.message); reconnecting every \(outputPolicy.interval), \(outputPolicy.attempts) times at most")
        emit(.outputFailed(name: output.name, message: error.message))
        emitWithState(.outputChanged(name: output.name, problem: outputState.problem))
        if wasPlaying { emitTick() }
        followStatus()
        publish()
        scheduleOutputRetry(after: outputPolicy.interval)
    }

    private func scheduleOutputRetry(after delay: Duration) {
        outputState.retry?.cancel()
        outputState.retry = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.retryOutput()
        }
    }

    private func retryOutput() async {
        outputState.retry = nil
        guard outputState.lost, !isShutDown else { return }
        guard !outputState.opening else { return scheduleOutputRetry(after: outputPolicy.interval) }
        let output = engine.output
        outputState.attempts += 1
        outputState.opening = true
        let opened = await open(output)
        outputState.opening = false
        // Switched elsewhere meanwhile (a switch waits for this one), or shut down.
        guard outputState.lost, engine.output == output, !isShutDown else { return }
        switch opened {
        case .success(let prepared):
            logger.notice("the output \(output.name) is back (attempt \(outputState.attempts))\(outputState.resumeWhenBack ? "; playing on" : "")")
            outputState.backAt = .now
            use(prepared)
        case .failure(let error):
            guard outputState.attempts < outputPolicy.attempts else {
                outputState.problem = "\(output.name): \(error.message); gave up after \(outputState.attempts) attempts (Play tries again)"
                logger.error("the output \(output.name) is still unavailable after \(outputState.attempts) attempts; giving up: \(error.message)")
                emitWithState(.outputChanged(name: output.name, problem: outputState.problem))
                return
            }
            scheduleOutputRetry(after: outputPolicy.interval)
        }
    }

    /// Play while the output is lost: play once it is back, and try at once when reconnecting had given up.
    func playWhenOutputIsBack() {
        outputState.resumeWhenBack = true
        if outputState.retry == nil, !outputState.opening {
            outputState.attempts = 0
            scheduleOutputRetry(after: .zero)
        }
    }

    /// Whether the output is lost (playback is held paused on the stand-in).
    var outputIsLost: Bool { outputState.lost }

    /// Pause or Stop while the output is lost: stay paused when it is back.
    func stayPausedWhenOutputIsBack() {
        outputState.resumeWhenBack = false
    }
}

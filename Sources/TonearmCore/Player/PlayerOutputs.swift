import Foundation
import Playback

/// The outputs the player can switch to, and the one chosen live (what its `OutputRecovery` does not decide).
struct OutputState {
    var configured: [AudioOutput] = []
    /// The retry timer of `Player.outputRecovery`.
    var retry: Task<Void, Never>?
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

/// Outputs: switching while playing, and carrying out what `OutputRecovery` decides for one that went away
/// (snapserver stopped).
extension Player {
    /// The outputs the player can switch to.
    public var outputs: [OutputDescription] {
        outputState.configured.map { OutputDescription(name: $0.name, kind: $0.kindName, detail: $0.detail) }
    }
    /// The name of the output audio goes to.
    public var outputName: String { engine.output.name }
    /// Why the current output takes no audio; "" while it does.
    public var outputProblem: String { outputRecovery.problem }

    /// Switches to the output named `name`: the track and position stay, after a short gap. An output that cannot
    /// be opened is `OutputUnavailable` and playback stays where it was. Switching to the current output opens it
    /// again (after it was lost: at once, without waiting for the next reconnect).
    public func setOutput(_ name: String) async throws {
        guard let output = outputState.configured.first(where: { $0.name == name }) else {
            throw TonearmError(.noSuchOutput, "no output named '\(name)' (outputs: \(outputState.configured.map(\.name).joined(separator: ", ")))")
        }
        guard outputRecovery.switchStarts() else { throw TonearmError(.busy, "an output is being opened; try again in a moment") }
        let opened = await open(output)
        guard !isShutDown else { return }
        switch opened {
        case .failure(let error):
            _ = outputRecovery.switchOpened(succeeded: false)
            logger.error("cannot switch to the output \(name): \(error.message)")
            throw TonearmError(.outputUnavailable, "cannot switch to the output '\(name)': \(error.message)")
        case .success(let prepared):
            logger.notice("output: \(output)")
            outputState.chosen = SavedOutput(name: name, configured: outputState.configuredStart)
            perform(outputRecovery.switchOpened(succeeded: true), prepared: prepared)
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

    /// Carries out the recovery's actions; `prepared` is the output a `.use` moves onto.
    private func perform(_ actions: [OutputRecovery.Action], prepared: PreparedOutput? = nil) {
        for action in actions {
            switch action {
            case .pauseEngine:
                engine.pause()
            case .scheduleRetry(let delay):
                outputState.retry?.cancel()
                outputState.retry = Task { [weak self] in
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    await self?.retryOutput()
                }
            case .cancelRetry:
                outputState.retry?.cancel()
                outputState.retry = nil
            case .open:
                let output = engine.output
                outputState.retry = nil
                Task { await self.retryOpen(output) }
            case .use(let paused):
                guard let prepared else { continue }
                engine.useOutput(prepared, paused: paused)
                followStatus()
            case .problemChanged(let problem):
                emitWithState(.outputChanged(name: prepared?.output.name ?? engine.output.name, problem: problem))
                publish()
            }
        }
    }

    /// The engine lost the output (or could not open it at start) and holds playback paused: say why, and
    /// reconnect.
    func outputFailed(_ output: AudioOutput, _ error: PlaybackError, wasPlaying: Bool) {
        guard output.name == engine.output.name, !isShutDown else { return }
        let (again, actions) = outputRecovery.failed(output.name, message: error.message, wasPlaying: wasPlaying,
                                                     playingNow: status == .playing, now: .now)
        if again { logger.warning("the output \(output.name) failed again soon after it came back") }
        logger.error("the output \(output.name) failed: \(error.message); reconnecting every \(outputPolicy.interval), \(outputPolicy.attempts) times at most")
        // Held paused before anyone hears of the failure, as the engine itself does.
        perform(actions.filter { $0 == .pauseEngine })
        emit(.outputFailed(name: output.name, message: error.message))
        perform(actions.filter { $0 != .pauseEngine })
        if wasPlaying { emitTick() }
        followStatus()
        publish()
    }

    private func retryOutput() {
        outputState.retry = nil
        guard !isShutDown else { return }
        perform(outputRecovery.retryDue())
    }

    private func retryOpen(_ output: AudioOutput) async {
        let opened = await open(output)
        guard !isShutDown else { return }
        let result: Result<Void, OutputFailure>
        switch opened {
        case .success: result = .success(())
        case .failure(let error): result = .failure(OutputFailure(message: error.message))
        }
        // Switched elsewhere meanwhile (a switch waits for this one): this output's result is stale.
        let (gaveUp, actions) = outputRecovery.retryOpened(result, sameOutput: engine.output == output, name: output.name, now: .now)
        if case .success(let prepared) = opened, actions.contains(where: { if case .use = $0 { true } else { false } }) {
            logger.notice("the output \(output.name) is back (attempt \(outputRecovery.attempts))")
            perform(actions, prepared: prepared)
        } else {
            if gaveUp, case .failure(let error) = opened {
                logger.error("the output \(output.name) is still unavailable after \(outputRecovery.attempts) attempts; giving up: \(error.message)")
            }
            perform(actions)
        }
    }

    /// Play while the output is lost: play once it is back, and try at once when reconnecting had given up.
    func playWhenOutputIsBack() {
        perform(outputRecovery.playPressed())
    }

    /// Whether the output is lost (playback is held paused on the stand-in).
    var outputIsLost: Bool { outputRecovery.lost }

    /// Pause or Stop while the output is lost: stay paused when it is back.
    func stayPausedWhenOutputIsBack() {
        outputRecovery.pausePressed()
    }
}

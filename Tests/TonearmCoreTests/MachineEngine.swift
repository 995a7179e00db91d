import Foundation
import Playback
import Synchronization
@testable import TonearmCore

/// A playback engine without GStreamer for the Player's tests: the real `PlaybackMachine`, with a fake pipeline
/// the test moves by hand (`bus`), answering resets, seeks and markers at once.
final class MachineEngine: PlaybackControl, Sendable {
    private struct State {
        var machine = PlaybackMachine(prerollTimeout: .seconds(10))
        var pipelinePosition: Int64 = 0
        var changingState = false
        var volume = 1.0
        var provider: (@Sendable (PlaybackItem) -> PlaybackItem?)?
        var commands: [String] = []
        var gains: [UInt64: Double] = [:]
        var equalizer: EqualizerCurve?
        var output = AudioOutput.sink("fakesink sync=true")
        /// Outputs that cannot be opened now, by name.
        var unavailable: Set<String> = []
        /// False while the engine stands for one still being built (see `DeferredEngine`).
        var canReceiveData = true
        var pauseEstimates: [PlaybackItem.Position?] = []
    }

    var canReceiveData: Bool { state.withLock { $0.canReceiveData } }
    /// Whether data can reach the engine from now on: false plays an engine still being built.
    func setCanReceiveData(_ can: Bool) { state.withLock { $0.canReceiveData = can } }
    private let state = Mutex(State())
    let reports: AsyncStream<PlaybackReport>
    private let continuation: AsyncStream<PlaybackReport>.Continuation

    init() {
        (reports, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    var snapshot: PlaybackMachine.Snapshot { state.withLock { $0.machine.snapshot } }
    var pipelineState: PlaybackState { state.withLock { $0.machine.reportedState } }
    var reportedPosition: Int64 {
        state.withLock { s in
            let snap = s.machine.snapshot
            guard snap.item != nil else { return 0 }
            // As the shell reads it: a load from the start has played nothing while it prerolls.
            if snap.prerollingFromStart { return 0 }
            return snap.positionOverride ?? s.pipelinePosition
        }
    }
    /// Commands the player gave, by name, in order.
    var commands: [String] { state.withLock { $0.commands } }
    var volume: Double { state.withLock { $0.volume } }

    /// The last gain set for each token (by load, hand-over or `setGain`).
    var gains: [UInt64: Double] { state.withLock { $0.gains } }
    var appliedGain: Double { state.withLock { s in s.machine.snapshot.item.flatMap { s.gains[$0.token] } ?? 1 } }

    /// The equalizer curve last set (nil: off).
    var equalizer: EqualizerCurve? { state.withLock { $0.equalizer } }
    func setEqualizer(_ curve: EqualizerCurve?) { state.withLock { $0.equalizer = curve } }

    func setGain(_ gain: Double, forToken token: UInt64) {
        state.withLock { $0.gains[token] = gain }
    }

    func setNextItemProvider(_ provider: @escaping @Sendable (PlaybackItem) -> PlaybackItem?) {
        state.withLock { $0.provider = provider }
    }

    func load(_ item: PlaybackItem, startPaused: Bool, at position: Int64) {
        state.withLock { $0.gains[item.token] = item.gain }
        send(.load(item, paused: startPaused, at: position, now: .now), "load \(item.token)\(startPaused ? " paused" : "")")
    }
    func play() { send(.play(now: .now), "play") }
    func pause() { send(.pause(now: .now), "pause") }
    func pause(estimate: PlaybackItem.Position?, announcing announce: () -> Void) {
        state.withLock { $0.pauseEstimates.append(estimate) }
        pause()
        announce()
    }
    /// The position each Pause was given to hold, in order.
    var pauseEstimates: [PlaybackItem.Position?] { state.withLock { $0.pauseEstimates } }
    func stop() { send(.stop, "stop") }
    func seek(to nanoseconds: Int64) -> Bool { send(.seek(nanoseconds, now: .now), "seek \(nanoseconds)") }
    func setRate(_ rate: Double) -> Bool { send(.setRate(rate, position: reportedPosition, now: .now), "rate \(rate)") }
    func setVolume(_ volume: Double) { state.withLock { $0.volume = volume } }
    func shutdown() { continuation.finish() }

    var output: AudioOutput { state.withLock { $0.output } }

    func prepareOutput(_ output: AudioOutput) throws -> PreparedOutput {
        guard !state.withLock({ $0.unavailable.contains(output.name) }) else {
            throw OutputConnection.failure("nothing reads the output \(output.name)")
        }
        return PreparedOutput(unbuilt: output)
    }

    func useOutput(_ prepared: PreparedOutput, paused: Bool?) {
        state.withLock { $0.output = prepared.output }
        send(.reopen(at: reportedPosition, paused: paused, now: .now), "output \(prepared.output.name)\(paused.map { $0 ? " paused" : " playing" } ?? "")")
    }

    /// Which outputs cannot be opened from now on.
    func setUnavailable(_ names: Set<String>) { state.withLock { $0.unavailable = names } }

    /// The output's sink fails as a real one does when its reader goes away: the item is held paused where it was,
    /// and the failure is reported.
    func failOutput() {
        let (output, wasPlaying) = state.withLock { ($0.output, $0.machine.snapshot.status == .playing) }
        send(.reopen(at: reportedPosition, paused: true, now: .now), nil)
        continuation.yield(PlaybackReport(.outputFailed(output, OutputConnection.failure("write: Broken pipe"), wasPlaying: wasPlaying)))
    }

    // MARK: The fake pipeline

    /// Moves the fake pipeline's clock.
    func setPipelinePosition(_ ns: Int64) { state.withLock { $0.pipelinePosition = ns } }
    /// A Play's or a Pause's state change the fake pipeline is still carrying out, as the test says.
    var isChangingState: Bool { state.withLock { $0.changingState } }
    func setChangingState(_ changing: Bool) { state.withLock { $0.changingState = changing } }

    /// A bus message (or tick) from the fake pipeline.
    @discardableResult
    func bus(_ input: PlaybackMachine.Input) -> Bool { send(input, nil) }

    /// The current item prerolls and starts, as GStreamer reports it.
    func prerollAndStart(duration: Int64? = 60_000_000_000) {
        guard let item = state.withLock({ $0.machine.currentItem }) else { return }
        bus(.streamStart(group: UInt32(truncatingIfNeeded: item.token), duration: duration, seekable: true))
        bus(.asyncDone(position: reportedPosition, duration: duration, seekable: true, settled: nil))
    }

    /// The current seek lands.
    func seekLands() {
        bus(.asyncDone(position: reportedPosition, duration: nil, seekable: true, settled: nil))
    }

    /// about-to-finish as a streaming thread calls it: asks the player's provider and hands over.
    func aboutToFinish() {
        let (finishing, provider) = state.withLock { ($0.machine.finishingItem(), $0.provider) }
        guard let (item, gen) = finishing, let next = provider?(item) else { return }
        state.withLock { _ = Self.apply(.handOver(next, generation: gen), &$0, continuation) }
    }

    /// A command and the effects it asks for are carried out under one lock, as the real shell's command lock does:
    /// the machine's answers (a reset done, a seek issued) come before anything else can reach it.
    @discardableResult
    private func send(_ input: PlaybackMachine.Input, _ command: String?) -> Bool {
        state.withLock { s in
            if let command { s.commands.append(command) }
            return Self.apply(input, &s, continuation)
        }
    }

    private static func apply(_ input: PlaybackMachine.Input, _ s: inout State,
                              _ continuation: AsyncStream<PlaybackReport>.Continuation) -> Bool {
        let step = s.machine.handle(input)
        for effect in step.effects {
            switch effect {
            case .reset: _ = apply(.resetDone, &s, continuation)
            case .seek(let position, _, let serial):
                s.pipelinePosition = position
                _ = apply(.seekMarker(serial), &s, continuation)
                _ = apply(.seekIssued(true), &s, continuation)
            case .postMarker(let gen, let stopped): _ = apply(.marker(gen, stopped: stopped), &s, continuation)
            case .postRejected(let gen): _ = apply(.rejectedMarker(gen), &s, continuation)
            case .emit(let event): continuation.yield(PlaybackReport(event))
            case .setURI, .setState, .wake, .log: break
            }
        }
        return step.accepted
    }
}

/// Resolves file URIs with a known length and no I/O.
struct FakeSource: SourcePlugin {
    let name = "fake"
    func canResolve(_ uri: URL) -> Bool { uri.isFileURL }
    func resolve(_ uri: URL) async throws -> TrackMetadata {
        if uri.path.contains("missing") { throw TonearmError.noSuchFile(uri.path) }
        var metadata = TrackMetadata(url: uri.absoluteString, title: uri.deletingPathExtension().lastPathComponent)
        metadata.length = 60_000_000
        // A file named live… stands for a station: no length, and its data must keep coming.
        if uri.lastPathComponent.hasPrefix("live") {
            metadata.isLive = true
            metadata.length = nil
        }
        return metadata
    }
}

import Foundation
import Playback
import Synchronization

/// The engine the Player drives from the first millisecond of a start, while GStreamer is still being set up on a
/// thread of its own: until `attach`, commands go to a `PlaybackMachine` of its own, so status, item and position read
/// as asked (a restored track holds paused at its saved position, Play promises playing); `attach` hands what they
/// came to (the item, paused or playing, its position, rate, volume, gains, the hand-over provider) to the real engine,
/// and from then on every call passes straight through. An output switched to meanwhile is connected at once (a
/// Snapcast FIFO or socket needs no GStreamer) and its sink built when the engine comes, before anything plays.
/// Nothing needs the real engine before something is to be heard: `buildWhenNeeded` says when to build it.
public final class DeferredEngine: PlaybackControl, Sendable {
    private struct State {
        // Never ticked: a track waiting for the engine does not time out.
        var machine = PlaybackMachine(prerollTimeout: .seconds(3600))
        var real: (any PlaybackControl)?
        var volume = 1.0
        var provider: (@Sendable (PlaybackItem) -> PlaybackItem?)?
        var gains: [UInt64: Double] = [:]
        var equalizer: EqualizerCurve?
        var crossfade: (seconds: Double, curve: FadeCurve, silence: Double)?
        var isShutDown = false
        /// The output switched to before `attach`.
        var chosenOutput: PreparedOutput?
        /// Events of the machine, to hand on outside the lock.
        var pending: [PlaybackEvent] = []
        /// Whether something was to be heard (a Play, a track loaded to play) before `attach`.
        var isNeeded = false
        var whenNeeded: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    private let startOutput: AudioOutput
    public let reports: AsyncStream<PlaybackReport>
    private let continuation: AsyncStream<PlaybackReport>.Continuation

    /// `output`: where the real engine will play, reported until it is attached.
    public init(output: AudioOutput) {
        startOutput = output
        (reports, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Whether the real engine is attached.
    public var isAttached: Bool { state.withLock { $0.real != nil } }

    /// Hands everything asked so far to `real` and passes every call to it from now on; its events follow ours.
    public func attach(_ real: any PlaybackControl) {
        let attached = state.withLock { s -> Bool in
            guard s.real == nil, !s.isShutDown else { return false }
            s.real = real
            if let provider = s.provider { real.setNextItemProvider(provider) }
            real.setVolume(s.volume)
            if let curve = s.equalizer { real.setEqualizer(curve) }
            if let c = s.crossfade { real.setCrossfade(seconds: c.seconds, curve: c.curve, silenceThreshold: c.silence) }
            let snapshot = s.machine.snapshot
            // Before the item, so that the first sound goes to the output chosen meanwhile.
            if let chosen = s.chosenOutput { real.useOutput(chosen, paused: nil) }
            s.chosenOutput = nil
            if let item = snapshot.item, snapshot.status != .stopped {
                var item = item
                if let gain = s.gains[item.token] { item.gain = gain }
                real.load(item, startPaused: snapshot.status != .playing, at: snapshot.positionOverride ?? 0)
                if snapshot.rate != 1 { real.setRate(snapshot.rate) }
            }
            for (token, gain) in s.gains { real.setGain(gain, forToken: token) }
            return true
        }
        guard attached else {
            if state.withLock({ $0.isShutDown }) { real.shutdown() }
            return
        }
        let realReports = real.reports
        Task { [continuation] in
            for await report in realReports { continuation.yield(report) }
            continuation.finish()
        }
    }

    /// Runs `build` once, as soon as something is to be heard (at once if it already is): an idle daemon never sets
    /// GStreamer up, and the first Play pays for it.
    public func buildWhenNeeded(_ build: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            guard s.real == nil, !s.isShutDown else { return false }
            if s.isNeeded { return true }
            s.whenNeeded = build
            return false
        }
        if now { build() }
    }

    /// Builds the real engine now, as something is about to be heard.
    public func warmUp() {
        state.withLock { s in s.real == nil ? Self.claimBuild(&s) : nil }?()
    }

    /// The build to run, the first time something is to be heard (once only: nil after).
    private static func claimBuild(_ s: inout State) -> (@Sendable () -> Void)? {
        guard !s.isNeeded else { return nil }
        s.isNeeded = true
        defer { s.whenNeeded = nil }
        return s.whenNeeded
    }

    /// The real engine, or nil with `command` applied to the machine (under the same lock, so nothing asked before
    /// `attach` is lost and nothing after it goes to the machine).
    private func route(_ command: (inout State) -> Void) -> (any PlaybackControl)? {
        let (real, events, build) = state.withLock { s -> ((any PlaybackControl)?, [PlaybackEvent], (@Sendable () -> Void)?) in
            if let real = s.real { return (real, [], nil) }
            command(&s)
            defer { s.pending = [] }
            return (nil, s.pending, s.machine.snapshot.status == .playing ? Self.claimBuild(&s) : nil)
        }
        for event in events { continuation.yield(PlaybackReport(event)) }
        build?()
        return real
    }

    @discardableResult
    private static func send(_ input: PlaybackMachine.Input, _ s: inout State) -> Bool {
        let step = s.machine.handle(input)
        for effect in step.effects {
            switch effect {
            // What a pipeline would answer at once; the rest waits for the real one.
            case .reset: send(.resetDone, &s)
            case .seek(_, _, let serial):
                send(.seekMarker(serial), &s)
                send(.seekIssued(true), &s)
            case .postMarker(let generation, let stopped): send(.marker(generation, stopped: stopped), &s)
            case .postRejected(let generation): send(.rejectedMarker(generation), &s)
            case .emit(let event): s.pending.append(event)
            case .setURI, .setState, .wake, .log: break
            }
        }
        return step.accepted
    }

    // MARK: PlaybackControl

    // The stand-in's own machine is read only while no engine is there: every publish reads the snapshot.
    public var snapshot: PlaybackMachine.Snapshot {
        switch read({ $0.snapshot }) {
        case .real(let real): real.snapshot
        case .own(let own): own
        }
    }

    public var status: PlaybackState {
        switch read({ $0.status }) {
        case .real(let real): real.status
        case .own(let own): own
        }
    }

    /// Nothing changes state before the engine is attached.
    public var isChangingState: Bool { state.withLock { $0.real }?.isChangingState ?? false }

    public var itemToken: UInt64? {
        switch read({ $0.itemToken }) {
        case .real(let real): real.itemToken
        case .own(let own): own
        }
    }

    public var pipelineState: PlaybackState {
        switch read({ $0.reportedState }) {
        case .real(let real): real.pipelineState
        case .own(let own): own
        }
    }

    public var reportedPosition: Int64 {
        switch read({ m in let o = m.snapshot; return o.item == nil ? 0 : o.positionOverride ?? 0 }) {
        case .real(let real): real.reportedPosition
        case .own(let own): own
        }
    }

    /// The engine once it is there, else `own` of the stand-in's machine, under one lock.
    private func read<T>(_ own: (PlaybackMachine) -> T) -> Answerer<T> {
        state.withLock { s in s.real.map { .real($0) } ?? .own(own(s.machine)) }
    }

    private enum Answerer<T> {
        case real(any PlaybackControl)
        case own(T)
    }

    public func setNextItemProvider(_ provider: @escaping @Sendable (PlaybackItem) -> PlaybackItem?) {
        route { $0.provider = provider }?.setNextItemProvider(provider)
    }

    public func load(_ item: PlaybackItem, startPaused: Bool, at position: Int64) {
        route { s in
            s.gains[item.token] = item.gain
            Self.send(.load(item, paused: startPaused, at: position, now: .now), &s)
        }?.load(item, startPaused: startPaused, at: position)
    }

    public func play() { route { Self.send(.play(now: .now), &$0) }?.play() }
    public func pause() { route { Self.send(.pause(now: .now), &$0) }?.pause() }
    public func play(announcing announce: () -> Void) {
        if let real = route({ Self.send(.play(now: .now), &$0) }) { real.play(announcing: announce) } else { announce() }
    }
    public func pause(estimate: PlaybackItem.Position?, announcing announce: () -> Void) {
        if let real = route({ Self.send(.pause(now: .now), &$0) }) {
            real.pause(estimate: estimate, announcing: announce)
        } else {
            announce()
        }
    }
    public func stop() { route { Self.send(.stop, &$0) }?.stop() }

    @discardableResult
    public func seek(to nanoseconds: Int64) -> Bool {
        var accepted = false
        if let real = route({ accepted = Self.send(.seek(nanoseconds, now: .now), &$0) }) { return real.seek(to: nanoseconds) }
        return accepted
    }

    @discardableResult
    public func setRate(_ rate: Double) -> Bool {
        var accepted = false
        let real = route { s in
            let position = s.machine.snapshot.positionOverride
            accepted = Self.send(.setRate(rate, position: position, now: .now), &s)
        }
        return real?.setRate(rate) ?? accepted
    }

    public func setVolume(_ volume: Double) { route { $0.volume = volume }?.setVolume(volume) }

    public func setCrossfade(seconds: Double, curve: FadeCurve, silenceThreshold: Double) {
        route { $0.crossfade = (seconds, curve, silenceThreshold) }?.setCrossfade(seconds: seconds, curve: curve, silenceThreshold: silenceThreshold)
    }

    /// Before the engine is attached nothing plays, so there is nothing to fade.
    public func fadeNextLoad(seconds: Double) { state.withLock { $0.real }?.fadeNextLoad(seconds: seconds) }
    public var canReceiveData: Bool { state.withLock { $0.real }?.canReceiveData ?? false }

    public func setGain(_ gain: Double, forToken token: UInt64) {
        route { $0.gains[token] = gain }?.setGain(gain, forToken: token)
    }

    public var appliedGain: Double {
        // Read at every publication: the deferred machine's item is looked at only while no engine is attached.
        let (real, gain) = state.withLock { s in s.real.map { ($0, nil) } ?? (nil, s.machine.snapshot.item.flatMap { s.gains[$0.token] }) }
        return real?.appliedGain ?? gain ?? 1
    }

    public func setEqualizer(_ curve: EqualizerCurve?) { route { $0.equalizer = curve }?.setEqualizer(curve) }

    public var output: AudioOutput {
        let (real, chosen) = state.withLock { ($0.real, $0.chosenOutput) }
        return real?.output ?? chosen?.output ?? startOutput
    }

    /// Before the engine is attached a Snapcast output is connected (so one that cannot be is refused now) and the
    /// rest taken as they are: a switch is never held until GStreamer is set up.
    public func prepareOutput(_ output: AudioOutput) throws -> PreparedOutput {
        if let real = state.withLock({ $0.real }) { return try real.prepareOutput(output) }
        return try PreparedOutput.connect(output)
    }

    public func useOutput(_ prepared: PreparedOutput, paused: Bool?) {
        // Nothing was lost before the engine existed, so only a hold is carried over.
        route { s in
            s.chosenOutput = prepared
            if paused == true { Self.send(.pause(now: .now), &s) }
        }?.useOutput(prepared, paused: paused)
    }

    public func shutdown() {
        let real = state.withLock { s -> (any PlaybackControl)? in
            s.isShutDown = true
            return s.real
        }
        if let real { real.shutdown() } else { continuation.finish() }
    }
}

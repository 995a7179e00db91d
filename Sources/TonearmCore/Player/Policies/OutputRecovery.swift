import Foundation

/// Reconnecting an output that went away (snapserver stopped, a device unplugged), and switching outputs one at a
/// time. A plain value: the player tells it what happened, with `now`, opens outputs off the actor when asked, and
/// performs the actions it returns.
struct OutputRecovery: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// Hold the engine paused: nothing is heard while the output is lost.
        case pauseEngine
        /// Try the output again after `delay` (replacing a retry that waits); then call `retryDue`.
        case scheduleRetry(after: Duration)
        case cancelRetry
        /// Open the current output off the actor and report with `retryOpened`.
        case open
        /// Move playback onto the opened output: `paused` as given (nil: as it was).
        case use(paused: Bool?)
        /// The faces learn why the output takes no audio ("" once it does).
        case problemChanged(String)
    }

    let policy: OutputRecoveryPolicy
    /// The current output failed and the engine holds playback paused on a silent stand-in.
    private(set) var lost = false
    /// Play again once the lost output is back: it was playing when it failed, or Play came meanwhile.
    private(set) var resumeWhenBack = false
    private(set) var attempts = 0
    /// When a reconnect last brought the output back: a failure soon after it goes on counting attempts (an output
    /// that opens and then fails at once must not be retried for ever).
    private(set) var backAt: ContinuousClock.Instant?
    private(set) var retryWaits = false
    /// An output is being opened (a switch or a reconnect): one at a time.
    private(set) var opening = false
    /// Why the current output takes no audio ("" while it does).
    private(set) var problem = ""

    init(policy: OutputRecoveryPolicy) {
        self.policy = policy
    }

    /// A failure within this long after the output came back counts as the same trouble.
    static let backWindow: Duration = .seconds(10)

    /// The engine lost the output `name` (or could not open it at start). `wasPlaying`: it was playing then;
    /// `playingNow`: the player's status says Playing (it started after the engine parked).
    mutating func failed(_ name: String, message: String, wasPlaying: Bool, playingNow: Bool,
                         now: ContinuousClock.Instant) -> (failedAgainSoon: Bool, actions: [Action]) {
        var actions: [Action] = []
        lost = true
        resumeWhenBack = resumeWhenBack || wasPlaying
        if playingNow {
            actions.append(.pauseEngine)
            resumeWhenBack = true
        }
        let again = backAt.map { now - $0 < Self.backWindow } ?? false
        if !again { attempts = 0 }
        problem = "\(name): \(message); reconnecting"
        actions.append(.problemChanged(problem))
        actions += scheduleRetry(after: policy.interval)
        return (again, actions)
    }

    private mutating func scheduleRetry(after delay: Duration) -> [Action] {
        retryWaits = true
        return [.scheduleRetry(after: delay)]
    }

    /// The retry timer fired.
    mutating func retryDue() -> [Action] {
        retryWaits = false
        guard lost else { return [] }
        guard !opening else { return scheduleRetry(after: policy.interval) }
        attempts += 1
        opening = true
        return [.open]
    }

    /// What the retry's open gave; `sameOutput`: playback is still on the output it tried (no switch meanwhile).
    mutating func retryOpened(_ opened: Result<Void, OutputFailure>, sameOutput: Bool, name: String,
                              now: ContinuousClock.Instant) -> (gaveUp: Bool, actions: [Action]) {
        opening = false
        guard lost, sameOutput else { return (false, []) }
        switch opened {
        case .success:
            backAt = now
            return (false, use())
        case .failure(let failure):
            guard attempts < policy.attempts else {
                problem = "\(name): \(failure.message); gave up after \(attempts) attempts (Play tries again)"
                return (true, [.problemChanged(problem)])
            }
            return (false, scheduleRetry(after: policy.interval))
        }
    }

    /// A switch asks to open an output: false while another is being opened.
    mutating func switchStarts() -> Bool {
        guard !opening else { return false }
        opening = true
        return true
    }

    /// What the switch's open gave.
    mutating func switchOpened(succeeded: Bool) -> [Action] {
        opening = false
        guard succeeded else { return [] }
        attempts = 0
        backAt = nil
        return use()
    }

    /// Playback moves onto an opened output; a lost one's playback resumes if it was playing.
    private mutating func use() -> [Action] {
        let paused: Bool? = lost ? !resumeWhenBack : nil
        lost = false
        problem = ""
        resumeWhenBack = false
        var actions: [Action] = []
        if retryWaits {
            retryWaits = false
            actions.append(.cancelRetry)
        }
        return actions + [.use(paused: paused), .problemChanged("")]
    }

    /// Play while the output is lost: play once it is back, and try at once when reconnecting had given up.
    mutating func playPressed() -> [Action] {
        guard lost else { return [] }
        resumeWhenBack = true
        guard !retryWaits, !opening else { return [] }
        attempts = 0
        return scheduleRetry(after: .zero)
    }

    /// Pause or Stop while the output is lost: stay paused when it is back.
    mutating func pausePressed() {
        resumeWhenBack = false
    }
}

/// Why an output could not be opened.
struct OutputFailure: Error, Sendable, Equatable {
    var message: String
}

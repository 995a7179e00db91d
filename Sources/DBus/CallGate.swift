import Synchronization

/// Holds incoming method calls back while a service finishes starting, so it can take its name on the bus first
/// and still answer every call in order, as a started service would. Also any other one-way "wait until ready".
/// While held, property reads of some interfaces may be let through (`letReads`).
public final class CallGate: Sendable {
    private struct Waiter {
        /// The interface a held property read reads; nil for anything else.
        let reading: String?
        /// Answers the held read on the thread that lets reads through, so no task has to wake first; true if it did.
        let answer: (@Sendable () -> Bool)?
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var held = false
        /// While held, the interfaces whose property reads may still be answered.
        var readable: Set<String> = []
        var waiting: [Waiter] = []

        func lets(_ reading: String?) -> Bool { !held || reading.map(readable.contains) == true }
    }

    private let state: Mutex<State>

    /// A gate that is open, or held from the start.
    public init(held: Bool = false) {
        state = Mutex(State(held: held))
    }

    public var isOpen: Bool { state.withLock { !$0.held } }

    /// How many callers wait in `pass` now.
    public var waiterCount: Int { state.withLock { $0.waiting.count } }

    /// Whether a property read of `interface` may be answered now: always while open, and while held once
    /// `letReads` named it.
    public func letsRead(_ interface: String) -> Bool {
        state.withLock { $0.lets(interface) }
    }

    public func hold() {
        state.withLock {
            $0.held = true
            $0.readable = []
        }
    }

    /// While held, lets property reads of `interfaces` through (the rest stays held), those waiting included: a
    /// waiting read that came with an answer is answered here, on the caller's thread.
    public func letReads(_ interfaces: Set<String>) {
        let resumed = state.withLock { s -> [Waiter] in
            s.readable.formUnion(interfaces)
            let (go, stay) = (s.waiting.filter { s.lets($0.reading) }, s.waiting.filter { !s.lets($0.reading) })
            s.waiting = stay
            return go
        }
        for waiter in resumed { waiter.continuation.resume(returning: waiter.answer?() ?? false) }
    }

    public func release() {
        let waiting = state.withLock { s -> [Waiter] in
            s.held = false
            s.readable = []
            defer { s.waiting = [] }
            return s.waiting
        }
        for waiter in waiting { waiter.continuation.resume(returning: false) }
    }

    /// Returns at once while open; otherwise when `release` is called, or, for a property read of `reading`, once
    /// `letReads` names that interface. True when `letReads` answered the read with `answer` (then the caller has
    /// nothing left to do); false when the call goes on the usual way.
    @discardableResult
    public func pass(reading: String? = nil, answer: (@Sendable () -> Bool)? = nil) async -> Bool {
        guard !state.withLock({ $0.lets(reading) }) else { return false }
        return await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { s -> Bool in
                guard !s.lets(reading) else { return true }
                s.waiting.append(Waiter(reading: reading, answer: answer, continuation: continuation))
                return false
            }
            if resumeNow { continuation.resume(returning: false) }
        }
    }
}

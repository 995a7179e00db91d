import Synchronization

/// Holds incoming method calls back while a service finishes starting, so it can take its name on the bus first
/// and still answer every call in order, as a started service would. Also any other one-way "wait until ready".
public final class CallGate: Sendable {
    private struct State {
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    /// A gate that is open, or held from the start.
    public init(held: Bool = false) {
        state = Mutex(State(held: held))
    }

    public var isOpen: Bool { state.withLock { !$0.held } }

    public func hold() {
        state.withLock { $0.held = true }
    }

    public func release() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.held = false
            defer { s.waiting = [] }
            return s.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns at once while open; otherwise when `release` is called.
    public func pass() async {
        guard state.withLock({ $0.held }) else { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { s -> Bool in
                guard s.held else { return true }
                s.waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

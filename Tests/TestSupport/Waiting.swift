// The benchmarks' release build (static Swift runtime) has no Testing module; there a wait only throws.
#if canImport(Testing)
import Testing
#endif

/// Polls `condition` until it holds or `timeout` passes; tests use generous bounds, never tight ones.
public func eventually(timeout: Duration = .seconds(30), interval: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// The one way a test waits for what it checks: until `condition` holds. Past `timeout` (a bound for a loaded
/// machine, never a timing the test relies on) it records what was awaited, with `detail` (a log, say), and throws.
public func waitUntil(_ what: String, timeout: Duration = .seconds(60), interval: Duration = .milliseconds(5),
                      detail: @autoclosure () -> String = "", _ condition: () async throws -> Bool) async throws {
    guard try await eventually(timeout: timeout, interval: interval, condition) else {
        let more = detail()
        #if canImport(Testing)
        Issue.record("timed out waiting for \(what)\(more.isEmpty ? "" : "\n" + more)")
        #endif
        throw WaitTimedOut(what: what)
    }
}

/// What `waitUntil` throws when its condition never held.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// Not a wait: lets `interval` go by on purpose, for what needs time itself to pass (a rate measured between two
/// reads, a stand-in that is slow or stalls, a client's pacing between commands). `reason` says which, where it is
/// called. Anything that waits for something to happen uses `waitUntil` (or `eventually`) instead.
public func letTimePass(_ interval: Duration, because reason: String) async {
    try? await Task.sleep(for: interval)
}

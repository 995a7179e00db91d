import Dispatch

extension DispatchQueue {
    /// Runs blocking work (C libraries, the file system) on this queue and awaits its result, so it never occupies a
    /// thread of the cooperative pool.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            async { continuation.resume(with: Result { try body() }) }
        }
    }
}

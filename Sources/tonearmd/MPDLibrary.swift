import Foundation
import LocalLibrary
import MPDProtocol
import TonearmCore

// The library plugin as the MPD face asks for it: the daemon is the one part that sees both.

extension LocalLibrary: MPDLibrarySource {
    public var changes: AsyncStream<MPDLibraryChange> {
        let subscription = events.subscribe()
        return AsyncStream { continuation in
            let task = Task {
                defer { subscription.cancel() }
                var scanning = false
                for await item in subscription {
                    switch item.event {
                    case .scanProgress:
                        // mpd says "update" when a scan starts and when it ends, not at every step.
                        if !scanning { continuation.yield(.scanning) }
                        scanning = true
                    case .scanFinished:
                        scanning = false
                        continuation.yield(.scanFinished)
                    case .changed:
                        continuation.yield(.changed)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func allTracks() async throws -> [LibraryTrack] {
        try await search([], offset: 0, limit: 0)
    }

    public func startRescan() {
        Task { _ = try? await scan() }
    }
}

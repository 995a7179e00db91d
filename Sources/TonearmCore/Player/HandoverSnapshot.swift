import Foundation
import Playback
import Synchronization

/// What comes after the current track, readable synchronously from GStreamer's `about-to-finish`
/// thread (handing that decision to another thread would stall playback).
///
/// It holds the next few items in play order, not just one: a short track can reach its own about-to-finish before
/// the player has heard that it started, and it must still hand over to the one after it.
final class HandoverSnapshot: Sendable {
    private struct State: Sendable {
        var current: UInt64?
        var upcoming: [PlaybackItem] = []

        var chain: [UInt64?] { [current] + upcoming.map(\.token) }
    }
    private let state = Mutex(State())

    /// The current item and the ones after it in play order.
    func set(current: UInt64?, upcoming: [PlaybackItem]) {
        state.withLock { $0 = State(current: current, upcoming: upcoming) }
    }

    /// The item to hand over when `finishing` ends, or nil to let it end normally.
    func next(after finishing: PlaybackItem) -> PlaybackItem? {
        guard let next = state.withLock({ s -> PlaybackItem? in
            guard let index = s.chain.firstIndex(of: finishing.token), index < s.upcoming.count else { return nil }
            return s.upcoming[index]
        }) else { return nil }
        // A vanished or unreadable next file would stall the pipeline; let the track end instead.
        if let url = URL(string: next.uri), url.isFileURL, access(url.path, R_OK) != 0 { return nil }
        return next
    }
}

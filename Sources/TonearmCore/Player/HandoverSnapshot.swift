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
        /// Items really handed over and not yet heard of by the player.
        var handedOver: [UInt64] = []

        var chain: [UInt64?] { [current] + upcoming.map(\.token) }
    }
    private let state = Mutex(State())

    /// Hand-overs already made within the new chain survive (a queue edit while one is under way).
    func set(current: UInt64?, upcoming: [PlaybackItem]) {
        state.withLock { s in
            var new = State(current: current, upcoming: upcoming)
            new.handedOver = s.handedOver.filter { new.chain.contains($0) }
            s = new
        }
    }

    /// True for an item handed over to follow another. Only such an item may start without being loaded: an item
    /// planned to come next may also start late from an earlier load (Play, then Next at once).
    func wasHandedOver(_ token: UInt64) -> Bool { state.withLock { $0.handedOver.contains(token) } }

    /// The player has heard that `token` started: it is no longer a hand-over to expect.
    func started(_ token: UInt64) {
        state.withLock { $0.handedOver.removeAll { $0 == token } }
    }

    /// The item to hand over when `finishing` ends, or nil to let it end normally.
    func next(after finishing: PlaybackItem) -> PlaybackItem? {
        guard let next = state.withLock({ s -> PlaybackItem? in
            guard let index = s.chain.firstIndex(of: finishing.token), index < s.upcoming.count else { return nil }
            return s.upcoming[index]
        }) else { return nil }
        // A vanished or unreadable next file would stall the pipeline; let the track end instead.
        if let url = URL(string: next.uri), url.isFileURL, access(url.path, R_OK) != 0 { return nil }
        state.withLock { s in if !s.handedOver.contains(next.token) { s.handedOver.append(next.token) } }
        return next
    }
}

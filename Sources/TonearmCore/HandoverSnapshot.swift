import Foundation
import Playback
import Synchronization

/// What comes after the current track, readable synchronously from GStreamer's `about-to-finish`
/// thread (handing that decision to another thread would stall playback).
final class HandoverSnapshot: Sendable {
    private struct State: Sendable {
        var current: UInt64?
        var next: PlaybackItem?
    }
    private let state = Mutex(State())

    func set(current: UInt64?, next: PlaybackItem?) {
        state.withLock { $0 = State(current: current, next: next) }
    }

    var pendingToken: UInt64? { state.withLock { $0.next?.token } }

    /// The item to hand over when `finishing` ends, or nil to let it end normally.
    func next(after finishing: PlaybackItem) -> PlaybackItem? {
        guard let next = state.withLock({ $0.current == finishing.token ? $0.next : nil }) else { return nil }
        // A vanished or unreadable next file would stall the pipeline; let the track end instead.
        if let url = URL(string: next.uri), url.isFileURL, access(url.path, R_OK) != 0 { return nil }
        return next
    }
}

import Foundation
import TonearmCore

/// A music library as the MPD face sees it, with its listening history (the sticker database); the daemon conforms the library plugin to it (this module names no
/// plugin).
public protocol MPDLibrarySource: ListeningHistory {
    /// The music folders; songs are named by their path inside one of them.
    var folders: [URL] { get }
    /// Whether a scan is running.
    var isScanning: Bool { get }
    /// Scan and change events; each access starts a new subscription.
    var changes: AsyncStream<MPDLibraryChange> { get }
    /// Every indexed track.
    func allTracks() async throws -> [LibraryTrack]
    /// Starts a scan of the music folders and returns without waiting for it.
    func startRescan()
}

/// What the library tells the MPD face.
public enum MPDLibraryChange: Sendable, Equatable {
    /// A scan is running (sent at its first progress report).
    case scanning
    case scanFinished
    /// The index changed.
    case changed
}

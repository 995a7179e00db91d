import Foundation

/// Tonearm's saved playlists as the MPD face needs them (listplaylists, load, save, playlistadd, …): the daemon hands
/// in the store it also serves over D-Bus and the CLI, so both faces see the same playlists.
public protocol MPDPlaylistStore: Sendable {
    /// Every playlist's name and when it last changed.
    func playlists() throws -> [(name: String, modified: Date)]
    /// The entries' URIs in order (a smart playlist's as they are now); throws when there is no such playlist.
    func uris(of name: String) async throws -> [String]
    /// Writes the playlist whole (creating or replacing it).
    func write(_ name: String, uris: [String]) throws
    /// Deletes it; throws when there is no such playlist.
    func remove(_ name: String) throws
    /// Whether it is a smart playlist: listed, read and loaded, but changed only by editing its rules.
    func isSmart(_ name: String) -> Bool
}

extension MPDPlaylistStore {
    /// Whether a playlist of that name exists.
    func exists(_ name: String) -> Bool { (try? playlists().contains { $0.name == name }) == true }
}

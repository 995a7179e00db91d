import Foundation

/// Where smart playlists live: `NAME.smart` files of rules, beside the saved playlists.
public enum SmartPlaylistFile {
    public static let pathExtension = "smart"

    /// Whether `url` names a smart playlist file.
    public static func isSmart(_ url: URL) -> Bool { url.pathExtension.lowercased() == pathExtension }
}

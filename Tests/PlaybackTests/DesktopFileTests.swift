import Foundation
import Playback
import Testing

/// dbus/tonearm.desktop offers "Open with Tonearm" for what GStreamer plays here and playlist files, and nothing else.
@Suite struct DesktopFileTests {
    static var desktopFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/tonearm.desktop")
    }

    @Test func mimeTypesArePlayableHereAndCoverTheCommonOnes() throws {
        let text = try String(contentsOf: Self.desktopFile, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("MimeType=") })
        let declared = line.dropFirst("MimeType=".count).split(separator: ";").map(String.init)
        // Playlist files are read by the streams plugin, which queues their entries.
        let playlists: Set = ["audio/x-mpegurl", "audio/mpegurl", "application/vnd.apple.mpegurl", "audio/x-scpls", "application/xspf+xml"]
        let playable = Set(MediaSupport.supportedMimeTypes()).union(playlists)
        let unplayable = declared.filter { !playable.contains($0) }
        #expect(unplayable.isEmpty, "declared but not playable here: \(unplayable)")
        for needed in ["audio/mpeg", "audio/mp4", "audio/x-m4a", "audio/flac", "audio/ogg", "audio/x-vorbis+ogg", "audio/opus",
                       "audio/x-wav", "audio/aiff", "audio/midi", "audio/x-midi"] {
            #expect(declared.contains(needed), "\(needed) is missing")
        }
        #expect(text.contains("\nExec=tonearm open %U\n"))
    }
}

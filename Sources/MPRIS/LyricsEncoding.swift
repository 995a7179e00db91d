import DBus
import Lyrics
import TonearmCore

/// The lyrics members of org.tonearm.Player1 as D-Bus values.
enum LyricsEncoding {
    static let properties: Set<String> = ["Lyrics", "LyricsSynced", "LyricsSource", "LyricsLine"]

    /// `a(xsa(xs))`: each line's start (-1 when untimed), text and word times.
    static func lines(_ lyrics: Lyrics?) -> DBusValue {
        .array(element: "(xsa(xs))", (lyrics?.lines ?? []).map { line in
            .structure([
                .int64(line.start ?? -1),
                .string(line.text),
                .array(element: "(xs)", line.words.map { .structure([.int64($0.start), .string($0.text)]) }),
            ])
        })
    }

    /// Every lyrics property of the player now.

    static func values(_ lyrics: Lyrics?, line: Int?) -> [String: DBusValue] {
        [
            "Lyrics": lines(lyrics),
            "LyricsSynced": .bool(lyrics?.isSynced ?? false),
            "LyricsSource": .string(lyrics?.source.rawValue ?? ""),
            "LyricsLine": .int32(Int32(clamping: line ?? -1)),
        ]
    }

    /// The bus side of the player's lyrics events.
    static func forward(_ event: PlayerEvent, on connection: DBusConnection, path: String) {
        switch event {
        case .lyricsChanged(_, let lyrics):
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: values(lyrics, line: nil).filter { $0.key != "LyricsLine" })
        case .lyricsLineChanged(let id, let index, let start, let text):
            connection.emitSignal(path: path, interface: TonearmPlayerInterface.name, member: "LyricsLineChanged",
                                  arguments: [.objectPath(id.path), .int32(Int32(clamping: index)), .int64(start), .string(text)])
            connection.emitPropertiesChanged(path: path, interface: TonearmPlayerInterface.name,
                                             changed: ["LyricsLine": .int32(Int32(clamping: index))])
        default:
            break
        }
    }
}

import Foundation
import RawPaths
import Synchronization
import TonearmCore

/// Parsed MIDI files, remembered by path and checked against size and modification time, so a folder listed
/// twice is read once. Paths are their bytes: a name need not be UTF-8. Safe from any thread.
final class MIDICatalog: Sendable {
    /// Extensions of MIDI files (compared lowercased); other files count when their content says MIDI.
    static let extensions: Set<String> = ["mid", "midi", "kar", "smf", "rmi"]

    struct Entry: Sendable {
        var size: Int
        var modified: timespec
        var result: Result<Parsed, SMFError>
    }

    struct Parsed: Sendable {
        var file: StandardMIDIFile
        var info: MIDIFileInfo
    }

    private let entries = Mutex<[RawPath: Entry]>([:])

    /// Whether the file is a MIDI file by name or by its first bytes.
    static func isMIDI(path: RawPath) -> Bool {
        if extensions.contains(path.lowercasedExtension) { return true }
        guard let head = path.contents(upTo: 12) else { return false }
        return SMFReader.hasMIDISignature(head)
    }

    /// The parsed file at `path` (read now unless remembered and unchanged); nil when there is no file.
    func parse(_ path: RawPath) -> Result<Parsed, SMFError>? {
        var info = stat()
        guard path.withCString({ stat($0, &info) }) == 0 else { return nil }
        let size = Int(info.st_size)
        let modified = info.st_mtim
        if let known = entries.withLock({ $0[path] }), known.size == size,
           known.modified.tv_sec == modified.tv_sec, known.modified.tv_nsec == modified.tv_nsec {
            return known.result
        }
        let karaoke = Self.isKaraoke(path)
        let result: Result<Parsed, SMFError>
        do {
            let file = try SMFReader.read(contentsOf: path)
            result = .success(Parsed(file: file, info: MIDIFileInfo(file, karaoke: karaoke)))
        } catch {
            result = .failure(error)
        }
        entries.withLock { $0[path] = Entry(size: size, modified: modified, result: result) }
        return result
    }

    /// A `.kar` name: its text events are the words.
    static func isKaraoke(_ path: RawPath) -> Bool {
        path.lowercasedExtension == "kar"
    }

    /// Parses many files at once on every core (a folder of thousands lists in one go).
    func parseAll(_ paths: [RawPath]) -> [Result<Parsed, SMFError>?] {
        let results = Mutex([Result<Parsed, SMFError>?](repeating: nil, count: paths.count))
        DispatchQueue.concurrentPerform(iterations: paths.count) { i in
            let parsed = parse(paths[i])
            results.withLock { $0[i] = parsed }
        }
        return results.withLock { $0 }
    }
}

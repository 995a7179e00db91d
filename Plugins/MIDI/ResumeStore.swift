import Foundation
import TonearmCore

/// The last MIDI file chosen, kept relative to the root so it survives a moved or renamed root folder.
struct ResumeStore: Sendable {
    struct Choice: Codable, Equatable {
        /// Relative to the root, "/"-separated.
        var path: String
        /// The root when it was chosen (for people reading the file; the relative path is what counts).
        var root: String?
    }

    let url: URL

    func load() -> Choice? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(Choice.self, from: data)
    }

    func save(_ choice: Choice) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(choice), to: url)
    }
}

import Foundation

/// SHOUTcast/Icecast in-stream metadata: `StreamTitle='Artist - Title';StreamUrl='…';`, padded with NULs.
enum ICYMetadata {
    /// The StreamTitle of one metadata block; nil when it has none or it is empty.
    static func streamTitle(_ block: [UInt8]) -> String? {
        let end = block.firstIndex(of: 0) ?? block.count
        let bytes = Array(block[..<end])
        // UTF-8 from Icecast 2.4; older servers send Latin-1.
        let text = String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
        guard let start = text.range(of: "StreamTitle='") else { return nil }
        let rest = text[start.upperBound...]
        let value = rest.range(of: "';").map { rest[..<$0.lowerBound] } ?? rest.dropLast(rest.hasSuffix("'") ? 1 : 0)
        let title = value.trimmingCharacters(in: .whitespaces)
        return title.isEmpty ? nil : title
    }
}

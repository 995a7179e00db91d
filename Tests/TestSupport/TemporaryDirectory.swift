import Foundation

/// A fresh folder for one test, removed when the value goes away.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL

    public init(_ prefix: String = "tonearm-test") {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-XXXXXX").path
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        url = URL(fileURLWithPath: made.map { String(cString: $0) } ?? template)
    }

    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

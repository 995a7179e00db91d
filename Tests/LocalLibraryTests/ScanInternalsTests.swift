import Foundation
import RawPaths
import TestSupport
import Testing
import TonearmCore
@testable import LocalLibrary

/// The scan's shortcuts must give exactly what the plain ways give.
@Suite struct ScanInternalsTests {
    static func foundationFold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    @Test func foldKeyMatchesFoundationFolding() {
        var samples = (0..<128).map { "ab" + String(UnicodeScalar(UInt8($0))) + "Z" }
        samples += ["", "Miles Davis", "MILES", "Über den Wolken", "Café Noir", "Jörg Weiß", "Ночной", "東京", "Ｆｕｌｌ",
                    "e\u{301}", "Blue – take 12", "“Quoted” ‘Song’ … ‹›", "A‐B‑C‒D—E―F", "ﬁ ligature", "ǅ title"]
        samples += (0x2010...0x2027).map { "X" + String(UnicodeScalar($0)!) + "y" }
        samples += (0x2030...0x205E).map { "X" + String(UnicodeScalar($0)!) + "y" }
        for text in samples {
            #expect(foldKey(text) == Self.foundationFold(text), "\(Array(text.unicodeScalars))")
        }
    }

    @Test func pathKeyMatchesFoldingTheWholePath() {
        var writer = IndexWriter(generation: 1)
        let paths: [[UInt8]] = [
            Array("/music/Électrique Band 4/Parade of Blue 40 (2000)/01 Blue Harbour – take 3.flac".utf8),
            Array("/music/Électrique Band 4/Parade of Blue 40 (2000)/02 Ночной Choir – take 4.ogg".utf8),
            Array("/music/Électrique Band 4/Parade of Blue 40 (2000)/\u{301}accent first.ogg".utf8),
            Array("/music/ＦＵＬＬ/ﾞvoiced.mp3".utf8),
            Array("/music/latin1/caf".utf8) + [0xE9] + Array(".wav".utf8),
            Array("/music/broken".utf8) + [0xC3] + Array("/A.flac".utf8),
            Array("/x.flac".utf8),
            Array("/music/東京/Song.flac".utf8),
        ]
        for bytes in paths {
            let path = RawPath(bytes: bytes)
            #expect(writer.pathKey(path) == foldKey(path.string), "\(path.string)")
        }
    }

    @Test func uriPercentEncodesEveryByteOutsideTheUnreservedSet() {
        let unreserved = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/".utf8))
        let bytes = [UInt8(ascii: "/")] + (1...255).map { UInt8($0) }.filter { $0 != UInt8(ascii: "/") }
        var expected = "file:///"
        for b in bytes.dropFirst() {
            expected += unreserved.contains(b) ? String(UnicodeScalar(b)) : String(format: "%%%02X", b)
        }
        #expect(RawPath(bytes: bytes).uri == expected)
        #expect(RawPath("/").uri == "file:///")
        #expect(RawPath("/music/Café Noir.flac").uri == "file:///music/Caf%C3%A9%20Noir.flac")
    }

    @Test func readAheadHandsOverEveryResultInOrder() throws {
        let dir = TemporaryDirectory("tonearm-readahead")
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        // WAV files whose data chunks promise different sizes fail with different reasons, so a result handed
        // over for the wrong file shows; every seventh is missing.
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        var files: [FoundFile] = []
        for i in 0..<300 {
            let path = RawPath(dir.file("\(i).wav").path)
            var bytes = Array("RIFF".utf8) + le32(40) + Array("WAVEfmt ".utf8) + le32(16)
            bytes += [1, 0, 1, 0] + le32(44100) + le32(88200) + [2, 0, 16, 0]
            bytes += Array("data".utf8) + le32(1000 + i) + [0, 0, 0, 0]
            if i % 7 != 0 { #expect(FileManager.default.createFile(atPath: path.string, contents: Data(bytes))) }
            files.append(FoundFile(path: path, uri: path.uri, size: bytes.count, mtime: 0))
        }
        let reader = ReadAhead(files: files, workers: 4, window: 7, artCache: ArtCache(folder: dir.file("art")))
        defer { reader.stop() }
        for (i, file) in files.enumerated() {
            #expect(reader.result(i).outcome == TagReader.read(file.path, size: file.size), "file \(i)")
        }
    }
}

import Foundation
import TestSupport
import Testing
@testable import ReceivedShares
import TonearmCore

@Suite struct FileTransferTests {
    @Test func movesIntoAFreeNameAndNeverReplaces() throws {
        let dir = TemporaryDirectory("tonearm-transfer")
        let inbox = dir.file("in"), received = dir.file("Received")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: received.appendingPathComponent("song.mp3"))
        try Data("old 2".utf8).write(to: received.appendingPathComponent("song (2).mp3"))
        let source = inbox.appendingPathComponent("song.mp3")
        try Data("new".utf8).write(to: source)
        let stored = try FileTransfer.transfer(source.path, into: received.path, name: "song.mp3", move: true)
        #expect(stored == received.appendingPathComponent("song (3).mp3").path)
        #expect(try String(contentsOf: received.appendingPathComponent("song.mp3"), encoding: .utf8) == "old")
        #expect(try String(contentsOfFile: stored, encoding: .utf8) == "new")
        #expect(!FileManager.default.fileExists(atPath: source.path))
    }

    @Test func acrossFileSystemsItCopiesFlushesAndThenRemoves() throws {
        let shm = URL(fileURLWithPath: "/dev/shm/tonearm-transfer-\(getpid())")
        try FileManager.default.createDirectory(at: shm, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: shm) }
        let dir = TemporaryDirectory("tonearm-transfer")
        let source = shm.appendingPathComponent("far away.flac")
        let bytes = Data((0..<300_000).map { UInt8($0 % 251) })
        try bytes.write(to: source)
        let stored = try FileTransfer.transfer(source.path, into: dir.url.path, name: "far away.flac", move: true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["far away.flac"], "no temporary file left")
        // Copy mode keeps the source.
        try bytes.write(to: source)
        _ = try FileTransfer.transfer(source.path, into: dir.url.path, name: "far away.flac", move: false)
        #expect(FileManager.default.fileExists(atPath: source.path))
        #expect(FileTransfer.sameBytes(source.path, dir.url.appendingPathComponent("far away (2).flac").path))
    }

    @Test func truncatedWAVAndAIFFHeadersAreCaught() throws {
        let dir = TemporaryDirectory("tonearm-transfer")
        let whole = WAV.sine(seconds: 1, sampleRate: 8000, channels: 1).data()
        let ok = dir.file("ok.wav"), cut = dir.file("cut.wav")
        try whole.write(to: ok)
        try whole.prefix(whole.count / 2).write(to: cut)
        #expect(Truncation.reason(ok.path) == nil)
        #expect(Truncation.reason(cut.path)?.hasPrefix("truncated: ") == true)
        var aiff = Data("FORM".utf8) + Data([0, 0, 0x10, 0]) + Data("AIFF".utf8)
        aiff.append(Data(repeating: 0, count: 100))
        let shortAIFF = dir.file("cut.aiff")
        try aiff.write(to: shortAIFF)
        #expect(Truncation.reason(shortAIFF.path)?.contains("FORM header announces") == true)
        let text = dir.file("x.txt")
        try Data("hello there, not audio".utf8).write(to: text)
        #expect(Truncation.reason(text.path) == nil)
    }
}

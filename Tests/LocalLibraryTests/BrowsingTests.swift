import Foundation
import Logging
import RawPaths
import TestSupport
import Testing
import TonearmCore
@testable import LocalLibrary

@Suite struct LibraryBrowsingTests {
    @Test func severalMusicFoldersAreSeveralRoots() async throws {
        let dir = TemporaryDirectory("tonearm-browse-library")
        let folders = [dir.file("a/Music"), dir.file("b/Music"), dir.file("Jazz")]
        for folder in folders { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try write(wavBytes(seconds: 0.1), to: folders[1].appendingPathComponent("Disc 1/Song 10.wav"))
        try write(wavBytes(seconds: 0.1), to: folders[1].appendingPathComponent("Disc 1/song 9.wav"))
        try write(wavBytes(seconds: 0.1), to: folders[2].appendingPathComponent("Solo.wav"))
        let library = LocalLibrary(folders: folders, database: dir.file("data/library.sqlite"),
                                       artCache: ArtCache(folder: dir.file("art")), logger: Logger(label: "browse-test"))
        try await library.scan()

        #expect(library.browseRoots.map(\.id) == ["library-Music", "library-Music-2", "library-Jazz"])
        #expect(library.browseRoots[1].title.hasSuffix(folders[1].path))
        #expect(try await library.list(root: "library-Music", path: "").isEmpty)
        let top = try await library.list(root: "library-Music-2", path: "")
        #expect(top == [.folder("Disc 1", path: "Disc 1")])
        let disc = try await library.list(root: "library-Music-2", path: "Disc 1")
        #expect(disc.map(\.path) == ["Disc 1/song 9.wav", "Disc 1/Song 10.wav"])
        #expect(disc.allSatisfy { !$0.isFolder && $0.uri?.hasPrefix("file://") == true && ($0.duration ?? 0) > 0 })
        #expect(try await library.list(root: "library-Jazz", path: "").map(\.title) == ["Solo"])

        await #expect(throws: TonearmError.self) { try await library.list(root: "library", path: "") }

        // A file whose name is not UTF-8 (a Latin-1 é) is listed with the URI that plays it; such a folder is not,
        // as no relative path can name it.
        _ = try writeRaw(wavBytes(seconds: 0.1), folder: folders[2], name: Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
        _ = try writeRaw(wavBytes(seconds: 0.1), folder: folders[2].appendingPathComponent("Ok"), name: Array("x.wav".utf8))
        let latin1Folder = RawPath(folders[2].path).appending(Array("d".utf8) + [0xE9] + Array("j".utf8))
        #expect(latin1Folder.withCString { mkdir($0, 0o755) } == 0)
        try await library.scan()
        let jazz = try await library.list(root: "library-Jazz", path: "")
        #expect(jazz.filter(\.isFolder).map(\.path) == ["Ok"])
        let cafe = try #require(jazz.first { $0.uri?.hasSuffix("/caf%E9.wav") == true }, "\(jazz)")
        #expect(cafe.path == "caf\u{FFFD}.wav")
        #expect((cafe.duration ?? 0) > 0)
        do {
            _ = try await library.list(root: "library-Jazz", path: "../a")
            Issue.record("'..' must be refused")
        } catch let error as TonearmError {
            #expect(error.reason.rawValue == "OutsideRoot")
        }
    }
}

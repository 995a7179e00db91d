import Foundation
import TestSupport
import Testing
@testable import TonearmCore

@Suite struct BrowseOrderTests {
    @Test func namesSortNaturallyAndIgnoringCase() {
        let names = ["Track 10.wav", "track 1.wav", "Track 2.wav", "Évora", "apple", "Banana", "Track 02b", "10", "9", "a"]
        let sorted = names.sorted(by: Browse.naturalPrecedes)
        #expect(sorted == ["9", "10", "a", "apple", "Banana", "Évora", "track 1.wav", "Track 2.wav", "Track 02b", "Track 10.wav"])
    }

    @Test func orderIsTotalAndStable() {
        // Same name but for case or leading zeros: still a definite, repeatable order.
        #expect(Browse.naturalCompare("ABC", "abc") == .orderedSame)
        #expect(Browse.naturalPrecedes("ABC", "abc") != Browse.naturalPrecedes("abc", "ABC"))
        #expect(Browse.naturalPrecedes("Track 2", "Track 02"))
        #expect(!Browse.naturalPrecedes("Track 02", "Track 2"))
        #expect(Browse.naturalPrecedes("x", "x1"))
        #expect(Browse.naturalPrecedes("a01b", "a1c"))
        #expect(Browse.naturalCompare("a01", "a1") == .orderedDescending)
        // Numbers longer than any integer type still compare.
        #expect(Browse.naturalPrecedes("v99999999999999999999999", "v100000000000000000000000"))
    }

    @Test func foldersComeFirst() {
        let entries = [
            BrowseEntry(name: "a.wav", path: "a.wav", isFolder: false),
            BrowseEntry.folder("Zeta", path: "Zeta"),
            BrowseEntry(name: "B 10.wav", path: "B 10.wav", isFolder: false),
            BrowseEntry.folder("album 10", path: "album 10"),
            BrowseEntry(name: "b 9.wav", path: "b 9.wav", isFolder: false),
            BrowseEntry.folder("Album 9", path: "Album 9"),
        ]
        #expect(Browse.sorted(entries).map(\.name) == ["Album 9", "album 10", "Zeta", "a.wav", "b 9.wav", "B 10.wav"])
    }

    @Test func hiddenNames() {
        #expect(Browse.isHidden(".git"))
        #expect(Browse.isHidden(".hidden.mid"))
        #expect(!Browse.isHidden("visible.mid"))
    }
}

@Suite struct BrowsePathTests {
    /// root/{A/B, empty, .secret, file.txt, inside -> A, outside -> <elsewhere>, dangling -> nowhere,
    /// sneaky -> A/../../elsewhere}; elsewhere/{x}.
    static func tree() throws -> (TemporaryDirectory, URL, URL) {
        let dir = TemporaryDirectory("tonearm-browse")
        let root = dir.file("root")
        let elsewhere = dir.file("elsewhere")
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("A/B"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent(".secret"), withIntermediateDirectories: true)
        try fm.createDirectory(at: elsewhere.appendingPathComponent("x"), withIntermediateDirectories: true)
        try Data("hi".utf8).write(to: root.appendingPathComponent("file.txt"))
        try Data("hi".utf8).write(to: elsewhere.appendingPathComponent("outside.txt"))
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("inside").path, withDestinationPath: "A")
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("outside").path, withDestinationPath: elsewhere.path)
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("dangling").path, withDestinationPath: "nowhere")
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("sneaky").path, withDestinationPath: "A/../../elsewhere")
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("linked.txt").path,
                                  withDestinationPath: elsewhere.appendingPathComponent("outside.txt").path)
        // A sibling whose name starts with the root's: not inside it.
        try fm.createDirectory(at: dir.file("root2"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("prefix").path, withDestinationPath: "../root2")
        return (dir, root, elsewhere)
    }

    static func reason(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as TonearmError {
            return error.reason.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test func resolvesFoldersInsideTheRoot() throws {
        let (dir, root, _) = try Self.tree()
        _ = dir
        let top = try Browse.resolve("", under: root)
        #expect(top.relativePath == "")
        #expect(top.childPath("A") == "A")
        let b = try Browse.resolve("./A//B/", under: root)
        #expect(b.relativePath == "A/B")
        #expect(b.childPath("c") == "A/B/c")
        #expect(b.url.path == root.appendingPathComponent("A/B").path)
        // A link that stays inside is fine; the path keeps the link's name.
        let inside = try Browse.resolve("inside/B", under: root)
        #expect(inside.relativePath == "inside/B")
        #expect(inside.realURL == b.realURL)
    }

    @Test func refusesEscapes() throws {
        let (dir, root, _) = try Self.tree()
        _ = dir
        for path in ["..", "../root", "A/../..", "A/..", "/", "/etc", root.path, "outside", "outside/x", "sneaky", "prefix"] {
            #expect(Self.reason { try Browse.resolve(path, under: root) } == "OutsideRoot", "\(path)")
        }
    }

    @Test func missingHiddenAndNonFolders() throws {
        let (dir, root, _) = try Self.tree()
        _ = dir
        for path in ["missing", "A/missing", "file.txt", "dangling", ".secret", "A/.x"] {
            #expect(Self.reason { try Browse.resolve(path, under: root) } == "NoSuchFolder", "\(path)")
        }
        let gone = dir.file("gone")
        #expect(Self.reason { try Browse.resolve("", under: gone) } == "NoSuchFolder")
    }

    @Test func diskEntriesLeaveOutHiddenDanglingAndEscapingLinks() throws {
        let (dir, root, _) = try Self.tree()
        _ = dir
        let entries = try Browse.diskEntries(of: Browse.resolve("", under: root))
        let names = Set(entries.map(\.name))
        #expect(names == ["A", "empty", "file.txt", "inside"])
        #expect(entries.first { $0.name == "inside" }?.isFolder == true)
        #expect(entries.first { $0.name == "file.txt" }?.isRegularFile == true)
    }

    @Test func withinComparesWholeComponents() {
        #expect(Browse.isWithin(URL(fileURLWithPath: "/music/a"), URL(fileURLWithPath: "/music")))
        #expect(Browse.isWithin(URL(fileURLWithPath: "/music"), URL(fileURLWithPath: "/music/")))
        #expect(!Browse.isWithin(URL(fileURLWithPath: "/music2/a"), URL(fileURLWithPath: "/music")))
        #expect(!Browse.isWithin(URL(fileURLWithPath: "/"), URL(fileURLWithPath: "/music")))
    }
}

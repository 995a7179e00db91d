import Foundation
import RawPaths
import TestSupport
import Testing
import TonearmCore
@testable import MIDI

/// A MIDI folder on disk and a source rooted there.
struct MIDIFolder {
    let temp = TemporaryDirectory("tonearm-midi")
    var root: URL { temp.url.appendingPathComponent("MIDI") }
    var resumeFile: URL { temp.url.appendingPathComponent("state/midi.json") }

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func source(root: URL? = nil) -> MIDISource {
        MIDISource(settings: MIDISettings(folder: root ?? self.root), resumeFile: resumeFile,
                   renditionFolder: temp.url.appendingPathComponent("cache"))
    }

    @discardableResult
    func song(_ relative: String, title: String? = nil, quarters: Int = 4) throws -> URL {
        let url = root.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var track: [UInt8] = []
        if let title { track += Ev.name(title) }
        track += Ev.program(0, channel: 0, 24) + Ev.notes(quarters, ticks: 96) + Ev.end()
        try SMFBytes(format: 0, division: 96, tracks: [track]).write(to: url)
        return url
    }

    func folder(_ relative: String) throws {
        try FileManager.default.createDirectory(at: root.appendingPathComponent(relative), withIntermediateDirectories: true)
    }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: root.appendingPathComponent(relative))
    }
}

@Suite struct MIDIBrowserTests {
    @Test func foldersFirstThenMIDIFilesInNaturalOrder() async throws {
        let m = try MIDIFolder()
        try m.folder("Zeta")
        try m.folder("album 10")
        try m.folder("Album 9")
        try m.folder(".hidden folder")
        try m.song("Song 10.mid")
        try m.song("song 9.MID")
        try m.song("Carol.KAR")
        try m.song("b.smf")
        try m.song("a.midi")
        try m.song("no extension") // recognised by its MThd header
        try m.song(".secret.mid")
        try m.write("notes.txt", Array("hello".utf8))
        try m.write("cover.jpg", [0xFF, 0xD8, 0xFF])
        let entries = try await m.source().list(root: "midi", path: "")
        #expect(entries.map(\.name) == ["Album 9", "album 10", "Zeta", "a.midi", "b.smf", "Carol.KAR", "no extension", "song 9.MID", "Song 10.mid"])
        #expect(entries.prefix(3).allSatisfy { $0.isFolder })
        #expect(entries.dropFirst(3).allSatisfy { !$0.isFolder && $0.uri != nil })
    }

    @Test func entriesCarryTheFilesMetadata() async throws {
        let m = try MIDIFolder()
        try m.song("Jazz/Take Five.mid", title: "Take Five", quarters: 8)
        try m.song("Jazz/untitled.mid")
        let entries = try await m.source().list(root: "midi", path: "Jazz")
        let named = try #require(entries.first { $0.name == "Take Five.mid" })
        #expect(named.path == "Jazz/Take Five.mid")
        #expect(named.title == "Take Five")
        #expect(named.duration.map { abs($0 - 4.0) < 1e-6 } == true)
        #expect(named.extra["tracks"] == .int(1))
        #expect(named.extra["channels"] == .int(1))
        #expect(named.extra["format"] == .int(0))
        #expect(named.extra["instruments"] == .strings(["Acoustic Guitar (nylon)"]))
        #expect(named.extra["lyrics"] == .bool(false))
        #expect(named.uri == m.root.appendingPathComponent("Jazz/Take Five.mid").absoluteString)
        #expect(entries.first { $0.name == "untitled.mid" }?.title == "untitled")
    }

    @Test func aBrokenMIDIFileIsListedWithItsReasonAndNothingToPlay() async throws {
        let m = try MIDIFolder()
        try m.write("renamed.mid", Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVE".utf8))
        try m.write("empty.mid", [])
        // A sparse 100 MB file with a MIDI header: refused by its size, not read into memory.
        let huge = m.root.appendingPathComponent("huge.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.end(1)]).write(to: huge)
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 100 * 1_048_576)
        try handle.close()
        let entries = try await m.source().list(root: "midi", path: "")
        #expect(entries.first { $0.name == "huge.mid" }?.extra["error"] == .string("100 MB is too large for a Standard MIDI File (the limit is 64 MB)"))
        let renamed = try #require(entries.first { $0.name == "renamed.mid" })
        #expect(renamed.uri == nil)
        #expect(renamed.extra["error"] == .string("not a Standard MIDI File: header chunk is 'RIFF'"))
        #expect(entries.first { $0.name == "empty.mid" }?.extra["error"] == .string("not a Standard MIDI File: the file is empty (0 bytes)"))
    }

    @Test func pathsThatEscapeTheRootAreRefused() async throws {
        let m = try MIDIFolder()
        try m.folder("inside")
        let outside = m.temp.url.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try SMFBytes(format: 0, division: 96, tracks: [Ev.end(96)]).write(to: outside.appendingPathComponent("x.mid"))
        try FileManager.default.createSymbolicLink(at: m.root.appendingPathComponent("escape"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(at: m.root.appendingPathComponent("link.mid"),
                                                   withDestinationURL: outside.appendingPathComponent("x.mid"))
        let source = m.source()
        for path in ["..", "inside/../..", "/etc", "escape", "../outside"] {
            await #expect(throws: TonearmError.self, "\(path)") { _ = try await source.list(root: "midi", path: path) }
            do { _ = try await source.list(root: "midi", path: path) } catch let error as TonearmError {
                #expect(error.reason.rawValue == "OutsideRoot", "\(path): \(error.message)")
            }
        }
        for path in ["link.mid", "escape/x.mid", "../outside/x.mid", "/tmp/x.mid"] {
            do {
                try await source.choose(root: "midi", path: path)
                Issue.record("choose(\(path)) was accepted")
            } catch let error as TonearmError {
                #expect(error.reason.rawValue == "OutsideRoot", "\(path): \(error.message)")
            }
        }
        // Links that escape are not listed at all.
        #expect(try await source.list(root: "midi", path: "").map(\.name) == ["inside"])
        await #expect(throws: TonearmError.self) { _ = try await source.list(root: "library", path: "") }
    }

    @Test func resumeReopensAtTheLastChoiceWithItsTrail() async throws {
        let m = try MIDIFolder()
        try m.song("Classical/Bach/Minuet.mid")
        try m.song("Classical/Bach/Prelude.mid")
        let source = m.source()
        #expect(try await source.resume(root: "midi") == .root(title: "MIDI files"))
        try await source.choose(root: "midi", path: "Classical/Bach/Prelude.mid")
        let place = try await m.source().resume(root: "midi") // a new source: the choice was stored
        #expect(place.folder == "Classical/Bach")
        #expect(place.selected == "Prelude.mid")
        #expect(place.trail == [BrowseStep(name: "MIDI files", path: ""), BrowseStep(name: "Classical", path: "Classical"),
                                BrowseStep(name: "Bach", path: "Classical/Bach")])
    }

    @Test func resumeFindsTheChoiceUnderAMovedRoot() async throws {
        let m = try MIDIFolder()
        try m.song("Classical/Bach/Minuet.mid")
        try await m.source().choose(root: "midi", path: "Classical/Bach/Minuet.mid")
        let moved = m.temp.url.appendingPathComponent("Other disk/My MIDI")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: m.root, to: moved)
        let place = try await m.source(root: moved).resume(root: "midi")
        #expect(place.folder == "Classical/Bach")
        #expect(place.selected == "Minuet.mid")
    }

    @Test func resumeOpensTheNearestFolderThatStillExists() async throws {
        let m = try MIDIFolder()
        let song = try m.song("Classical/Bach/Suites/Suite 1.mid")
        let source = m.source()
        try await source.choose(root: "midi", path: "Classical/Bach/Suites/Suite 1.mid")
        try FileManager.default.removeItem(at: song)
        var place = try await source.resume(root: "midi")
        #expect(place.folder == "Classical/Bach/Suites")
        #expect(place.selected == nil)
        try FileManager.default.removeItem(at: m.root.appendingPathComponent("Classical/Bach"))
        place = try await source.resume(root: "midi")
        #expect(place.folder == "Classical")
        #expect(place.selected == nil)
        #expect(place.trail.map(\.path) == ["", "Classical"])
    }

    @Test func playingAFileUnderTheRootRemembersIt() async throws {
        let m = try MIDIFolder()
        let url = try m.song("Pop/Hit.mid", title: "Hit")
        let source = m.source()
        try SoundFont.validate(SoundFont.debianDefault)
        let metadata = try await source.resolve(url)
        #expect(metadata.title == "Hit")
        #expect(metadata.length == 2_000_000)
        #expect(metadata.seeksDespiteQuery == true)
        #expect(metadata.streamURL == nil)
        await source.trackStarted(metadata)
        #expect(try await source.resume(root: "midi").selected == "Hit.mid")
    }

    /// Foundation's `URL.path` of a Latin-1 name is empty: the plugin names the file by its path's bytes.
    @Test func aFileNamedInLatin1ResolvesByItsURI() async throws {
        let m = try MIDIFolder()
        let made = try m.song("made.mid")
        let raw = RawPath(bytes: Array(m.root.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".mid".utf8))
        try #require(raw.withCString { rename(made.path, $0) } == 0)
        defer { _ = raw.withCString { unlink($0) } }
        let uri = try #require(URL(string: "file://\(m.root.path)/caf%E9.mid")) // the folder's name is plain ASCII
        #expect(uri.path.isEmpty)
        let source = m.source()
        #expect(source.canResolve(uri))
        try SoundFont.validate(SoundFont.debianDefault)
        let metadata = try await source.resolve(uri)
        #expect(metadata.url == uri.absoluteString)
        #expect(metadata.title == "caf\u{FFFD}")
        #expect(metadata.length == 2_000_000)
        try await source.verify(uri)
        #expect(!source.canResolve(try #require(URL(string: "file://\(m.root.path)/caf%E9.txt"))))
        // Listed in its folder with the URI that plays it.
        let listed = try await source.list(root: "midi", path: "")
        let entry = try #require(listed.first { $0.uri == uri.absoluteString }, "\(listed)")
        #expect(entry.title == "caf\u{FFFD}")
        #expect(entry.duration == 2)
    }

    @Test func resolveRefusesBadFilesAndBadSoundFonts() async throws {
        let m = try MIDIFolder()
        try m.write("fake.mid", Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVE".utf8))
        let source = m.source()
        #expect(source.canResolve(m.root.appendingPathComponent("fake.mid")))
        do {
            _ = try await source.resolve(m.root.appendingPathComponent("fake.mid"))
            Issue.record("a WAV named .mid resolved")
        } catch let error as TonearmError {
            #expect(error.reason.rawValue == "InvalidMIDIFile")
            #expect(error.message.hasSuffix("fake.mid: not a Standard MIDI File: header chunk is 'RIFF'"))
        }
        let url = try m.song("ok.mid")
        let missing = m.temp.url.appendingPathComponent("nowhere.sf2")
        let noFont = MIDISource(settings: MIDISettings(folder: m.root, soundFont: missing), resumeFile: m.resumeFile,
                                renditionFolder: m.temp.url)
        do {
            _ = try await noFont.resolve(url)
            Issue.record("resolved without a SoundFont")
        } catch let error as TonearmError {
            #expect(error.reason.rawValue == "SoundFontMissing")
            #expect(error.message.contains(missing.path))
        }
        let junk = m.temp.url.appendingPathComponent("junk.sf2")
        try Data("not a soundfont at all".utf8).write(to: junk)
        #expect(throws: TonearmError.self) { try SoundFont.validate(junk) }
        #expect(!source.canResolve(URL(fileURLWithPath: "/etc/hostname")))
    }

    @Test func formatTwoAndSMPTEFilesGetAPlayableRendition() async throws {
        let m = try MIDIFolder()
        let url = m.root.appendingPathComponent("patterns.mid")
        try SMFBytes(format: 2, division: 96, tracks: [Ev.notes(2, ticks: 96) + Ev.end(), Ev.notes(2, ticks: 96) + Ev.end()]).write(to: url)
        let metadata = try await m.source().resolve(url)
        #expect(metadata.length == 2_000_000)
        let stream = try #require(metadata.streamURL.flatMap(URL.init(string:)))
        let rendition = try SMFReader.read(contentsOf: stream)
        #expect(rendition.format == 0)
        #expect(abs(rendition.duration - 2.0) < 1e-6)
    }

    @Test func settingsFromTheConfigSection() throws {
        let music = URL(fileURLWithPath: "/home/u/Music")
        let defaults = try MIDISettings(section: [:], musicFolder: music)
        #expect(defaults.folder.path == "/home/u/Music/MIDI")
        #expect(defaults.soundFont == SoundFont.debianDefault)
        let custom = try MIDISettings(section: ["folder": .string("~/Songs"), "soundfont": .string("/sf/x.sf2")], musicFolder: music,
                                      environment: ["HOME": "/home/u"])
        #expect(custom.folder.path == "/home/u/Songs")
        #expect(custom.soundFont.path == "/sf/x.sf2")
        #expect(throws: TonearmError.self) { try MIDISettings(section: ["folder": .int(3)], musicFolder: music) }
        #expect(throws: TonearmError.self) { try MIDISettings(section: ["soundfont": .string("relative.sf2")], musicFolder: music) }
    }
}

import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// org.tonearm.Browser1 on the real daemon (the library's folders), and `tonearm browse` against it.
@Suite(.serialized, .timeLimit(.minutes(5))) struct BrowserTests {
    static let browser = "org.tonearm.Browser1"

    /// The entries of a listing as dictionaries.
    static func list(_ d: Daemon, _ root: String, _ path: String) async throws -> [[String: DBusValue]] {
        let reply = try await d.call(Self.browser, "List", [.string(root), .string(path)])
        return (reply.first?.arrayValue ?? []).compactMap { $0.unwrapped.vardictValue }
    }

    /// The D-Bus error name `List(root, path)` fails with, or nil when it answers.
    static func refusal(_ d: Daemon, _ root: String, _ path: String) async throws -> String? {
        do {
            _ = try await d.call(Self.browser, "List", [.string(root), .string(path)])
            return nil
        } catch let e as DBusError {
            #expect(!e.message.isEmpty)
            return e.name
        }
    }

    @Test func browsesTheLibraryFoldersInOrderAndRefusesEscapes() async throws {
        let d = try Daemon()
        let music = d.home.file("Music")
        let elsewhere = d.home.file("Elsewhere")
        let fm = FileManager.default
        for name in ["Track 10.wav", "Track 2.wav", "track 1.wav", "Album 2/One.wav", "Album 10/Two.wav",
                     ".hidden/Hidden.wav", ".secret.wav"] {
            let url = music.appendingPathComponent(name)
            try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try WAV.sine(seconds: 0.2, channels: 1).write(to: url)
        }
        try fm.createDirectory(at: music.appendingPathComponent("alpha"), withIntermediateDirectories: true)
        try Data("not music".utf8).write(to: music.appendingPathComponent("notes.txt"))
        // A tagged file, so the listing carries tags.
        let tagged = music.appendingPathComponent("Album 2/Tagged.flac")
        let encoded = try await gstLaunch([
            "-q", "audiotestsrc", "num-buffers=40", "!", "audioconvert", "!",
            "taginject", "tags=\"title=\\\"Song Title\\\",artist=\\\"Some Artist\\\",album=\\\"Some Album\\\"\"",
            "!", "flacenc", "!", "filesink", "location=\(tagged.path)",
        ])
        try #require(encoded.status == 0, "gst-launch: \(encoded.err)")
        // Links: one leading outside the root (with music there), one staying inside.
        try fm.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try WAV.sine(seconds: 0.2, channels: 1).write(to: elsewhere.appendingPathComponent("Outside.wav"))
        try fm.createSymbolicLink(atPath: music.appendingPathComponent("escape").path, withDestinationPath: elsewhere.path)
        try fm.createSymbolicLink(atPath: music.appendingPathComponent("Album 10/up").path, withDestinationPath: "../..")

        try await d.start()
        let rootsReply = try await d.call(Self.browser, "Roots")
        let roots = (rootsReply.first?.arrayValue ?? []).compactMap { value -> [String]? in
            guard case .structure(let fields) = value.unwrapped else { return nil }
            return fields.compactMap(\.stringValue)
        }
        #expect(roots == [["library", "Music library"], ["midi", "MIDI files"]])

        try await d.waitFor("the initial scan") {
            let top = try await Self.list(d, "library", "").filter { $0["folder"]?.boolValue == false }
            let album = try await Self.list(d, "library", "Album 2").filter { $0["folder"]?.boolValue == false }
            return top.count == 3 && album.count == 2
        }

        // Folders first (even an empty one), then the indexed files; natural, case-insensitive; hidden, non-audio
        // and escaping entries left out.
        let top = try await Self.list(d, "library", "")
        #expect(top.compactMap { $0["name"]?.stringValue } == ["Album 2", "Album 10", "alpha", "track 1.wav", "Track 2.wav", "Track 10.wav"])
        #expect(top.compactMap { $0["folder"]?.boolValue } == [true, true, true, false, false, false])
        #expect(top.compactMap { $0["path"]?.stringValue } == ["Album 2", "Album 10", "alpha", "track 1.wav", "Track 2.wav", "Track 10.wav"])
        let file = try #require(top.last)
        #expect(file["uri"]?.stringValue == music.appendingPathComponent("Track 10.wav").absoluteString)
        #expect(file["title"]?.stringValue == "Track 10")
        #expect((file["duration"]?.doubleValue ?? 0) > 0.1)
        #expect(top.first?["uri"] == nil, "folders have no uri")

        let album = try await Self.list(d, "library", "Album 2/")
        #expect(album.compactMap { $0["name"]?.stringValue } == ["One.wav", "Tagged.flac"])
        #expect(album.compactMap { $0["path"]?.stringValue } == ["Album 2/One.wav", "Album 2/Tagged.flac"])
        let song = try #require(album.last)
        #expect(song["title"]?.stringValue == "Song Title")
        #expect(song["artist"]?.stringValue == "Some Artist")
        #expect(song["album"]?.stringValue == "Some Album")
        #expect((song["duration"]?.doubleValue ?? 0) > 0.5)
        #expect(try await Self.list(d, "library", "alpha").isEmpty)

        // Refusals, each with its own name.
        let outside = "org.tonearm.Error.OutsideRoot"
        #expect(try await Self.refusal(d, "library", "..") == outside)
        #expect(try await Self.refusal(d, "library", "Album 2/../..") == outside)
        #expect(try await Self.refusal(d, "library", "/etc") == outside)
        #expect(try await Self.refusal(d, "library", music.path) == outside)
        #expect(try await Self.refusal(d, "library", "escape") == outside)
        #expect(try await Self.refusal(d, "library", "Album 10/up") == outside)
        #expect(try await Self.refusal(d, "nope", "") == "org.tonearm.Error.NoSuchRoot")
        #expect(try await Self.refusal(d, "library", "missing") == "org.tonearm.Error.NoSuchFolder")
        #expect(try await Self.refusal(d, "library", "Track 2.wav") == "org.tonearm.Error.NoSuchFolder")
        #expect(try await Self.refusal(d, "library", ".hidden") == "org.tonearm.Error.NoSuchFolder")

        // The CLI over the same face.
        let json = try await d.tonearm("browse", "library", "--json")
        #expect(json.status == 0)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]]
        #expect(parsed?.compactMap { $0["name"] as? String } == ["Album 2", "Album 10", "alpha", "track 1.wav", "Track 2.wav", "Track 10.wav"])
        #expect(parsed?.first?["folder"] as? Bool == true)
        #expect(parsed?.last?["duration"] as? Double ?? 0 > 0.1)
        let nested = try await d.tonearm("browse", "library", "Album 2", "--json")
        let nestedEntries = try JSONSerialization.jsonObject(with: Data(nested.out.utf8)) as? [[String: Any]]
        #expect(nestedEntries?.last?["artist"] as? String == "Some Artist")
        let rootsJSON = try await d.tonearm("browse", "--json")
        let rootList = try JSONSerialization.jsonObject(with: Data(rootsJSON.out.utf8)) as? [[String: Any]]
        #expect(rootList?.first?["root"] as? String == "library")
        let text = try await d.tonearm("browse", "library")
        #expect(text.status == 0)
        let lines = text.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "Album 2/")
        #expect(lines.count == 6)
        let refused = try await d.tonearm("browse", "library", "..")
        #expect(refused.status == 1)
    }
}

import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// org.tonearm.Library1 on the real daemon, and `tonearm library` against it.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LibraryTests {
    static let library = "org.tonearm.Library1"

    /// Writes small WAVs into $HOME/Music of the daemon's home.
    static func music(_ d: Daemon, _ files: [String]) throws -> URL {
        let folder = d.home.file("Music")
        for name in files {
            let url = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try WAV.sine(seconds: 0.2, channels: 1).write(to: url)
        }
        return folder
    }

    @Test func indexesTheMusicFolderAndAnswersQueries() async throws {
        let d = try Daemon()
        let folder = try Self.music(d, ["Évora/One.wav", "Évora/Two.wav", "Other/Three.wav", ".hidden/Four.wav"])
        try Data((0..<2000).map { _ in UInt8.random(in: 0...255) }).write(to: folder.appendingPathComponent("junk.mp3"))
        try Data(MetadataTests.png).write(to: folder.appendingPathComponent("Évora/cover.png"))
        try await d.start()
        try await d.waitFor("initial scan") {
            let failures = try await d.call(Self.library, "Failures").first?.arrayValue ?? []
            let found = try await d.call(Self.library, "Search", [.string("path^/"), .uint32(0), .uint32(100)]).first?.arrayValue ?? []
            return found.count == 3 && failures.count == 1
        }
        let folders = try await d.get(Self.library, "Folders").arrayValue?.compactMap(\.stringValue)
        #expect(folders == [folder.path])
        let hits = try await d.call(Self.library, "Search", [.string("title^on"), .uint32(0), .uint32(10)])
        let titles = (hits.first?.arrayValue ?? []).compactMap { $0.vardictValue?["title"]?.stringValue }
        #expect(titles == ["One"])
        let failures = try await d.call(Self.library, "Failures").first?.arrayValue ?? []
        if case .structure(let fields)? = failures.first?.unwrapped {
            #expect(fields.first?.stringValue == folder.appendingPathComponent("junk.mp3").path)
            let reason = fields.last?.stringValue ?? ""
            #expect(!reason.isEmpty, "a failure has a reason")
        } else {
            Issue.record("Failures should list junk.mp3")
        }
        let random = try await d.call(Self.library, "RandomTrack").first?.vardictValue ?? [:]
        #expect(random["uri"]?.stringValue?.hasPrefix("file://") == true)

        // Folder art reaches MPRIS Metadata for whatever plays from the library.
        let one = try #require((hits.first?.arrayValue ?? []).first?.vardictValue?["uri"]?.stringValue)
        _ = try await d.call(Daemon.player, "OpenUri", [.string(one)])
        try await d.waitFor("playing One with its cover") { (try await d.metadata())["mpris:artUrl"] != nil }
        let art = try #require(URL(string: (try await d.metadata())["mpris:artUrl"]?.stringValue ?? ""))
        #expect([UInt8](try Data(contentsOf: art)) == MetadataTests.png)
        #expect((try await d.metadata())["xesam:title"]?.stringValue == "One")

        // A file written while the daemon runs arrives through the watcher.
        let finished = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.library, member: "ScanFinished"))
        try WAV.sine(seconds: 0.2, channels: 1).write(to: folder.appendingPathComponent("Other/Late.wav"))
        try await d.waitFor("the watcher picked up a new file") {
            let found = try await d.call(Self.library, "Search", [.string("title=late"), .uint32(0), .uint32(10)]).first?.arrayValue ?? []
            return found.count == 1
        }
        _ = finished

        // Bad expressions are named errors.
        do {
            _ = try await d.call(Self.library, "Search", [.string("colour=blue"), .uint32(0), .uint32(10)])
            Issue.record("an unknown field must be refused")
        } catch let e as DBusError {
            #expect(e.name.hasPrefix("org.tonearm.Error."), "\(e)")
        }

        // The CLI over the same face.
        let artists = try await d.tonearm("library", "artists", "--json")
        #expect(artists.status == 0)
        #expect((try JSONSerialization.jsonObject(with: Data(artists.out.utf8)) as? [Any])?.isEmpty == false)
        let scan = try await d.tonearm("library", "scan")
        #expect(scan.status == 0)
        #expect(scan.out.contains("added"))
        let failed = try await d.tonearm("library", "failures")
        #expect(failed.out.contains("junk.mp3"))
    }

    @Test func scanOnStartCanBeLeftToTheUser() async throws {
        let d = try Daemon()
        _ = try Self.music(d, ["A/One.wav", "A/Two.wav"])
        let config = d.home.file("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "[plugins.library]\nscan-on-start = false\n".write(to: config, atomically: true, encoding: .utf8)
        try await d.start()
        let finished = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.library, member: "ScanFinished"))
        // The daemon answers once the library has started; the Scan below then adding both files proves no scan ran
        // at start (one would have left it nothing to add).
        #expect(try await d.call(Self.library, "Artists").first?.arrayValue?.isEmpty == true, "nothing is scanned at start")
        _ = try await d.call(Self.library, "Scan")
        try await d.waitFor("ScanFinished") { !finished.named("ScanFinished").isEmpty }
        #expect(finished.named("ScanFinished")[0].arguments == [.uint32(2), .uint32(0), .uint32(0), .uint32(0)])
    }

    @Test func positionStillAnswersDuringATenThousandFileScan() async throws {
        let d = try Daemon()
        let folder = d.home.file("Music")
        let bytes = WAV.sine(seconds: 0.01, channels: 1).data()
        for i in 0..<10_000 {
            let dir = folder.appendingPathComponent("Artist \(i / 500)/Album \(i / 50)")
            if i % 50 == 0 { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
            try bytes.write(to: dir.appendingPathComponent("Track \(i).wav"))
        }
        let a = try d.sine("playing.wav", seconds: 120)
        let progress = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.library, member: "ScanProgress"))
        try await d.start([a])
        var answered = 0
        var scanning = true
        while scanning {
            // Each call must answer (the bus's own 25 s timeout is the generous bound); no timing is asserted.
            let position = try await d.get(Daemon.player, "Position").int64Value
            #expect(position != nil)
            answered += 1
            scanning = try await d.get(Self.library, "Scanning") == .bool(true) || progress.signals.isEmpty
            await letTimePass(.milliseconds(20), because: "reads spread over the whole scan, as a client polling Position would")
            if answered > 20_000 { break }
        }
        #expect(!progress.signals.isEmpty, "the scan reported progress")
        let found = try await d.call(Self.library, "Search", [.string("title^track"), .uint32(0), .uint32(10_000)]).first?.arrayValue ?? []
        #expect(found.count == 10_000)
        #expect(try await d.status() == "Playing")
    }
}

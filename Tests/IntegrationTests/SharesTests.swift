import DBus
import Foundation
import Playback
import DaemonHarness
import TestSupport
import Testing

/// Received shares and exports through the real daemon, with real files, writers and signals.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharesTests {
    static let shares = "org.tonearm.Shares1"

    /// A daemon whose inboxes, Received and Rejected folders are under its HOME.
    static func start(_ d: Daemon, inboxes: [URL]? = nil, extra: String = "", settle: Double = 1.0) async throws -> (inbox: URL, received: URL, rejected: URL) {
        let music = d.home.url.appendingPathComponent("Music")
        let inbox = music.appendingPathComponent("Inbox")
        let all = inboxes ?? [inbox]
        for folder in all { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let config = d.home.url.appendingPathComponent("config/tonearm/config.toml")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        let list = all.map { "\"\($0.path)\"" }.joined(separator: ", ")
        try "[plugins.shares]\ninboxes = [\(list)]\nsettle-seconds = \(settle)\n\(extra)\n".write(to: config, atomically: true, encoding: .utf8)
        try await d.start()
        return (all[0], music.appendingPathComponent("Received"), music.appendingPathComponent("Rejected"))
    }

    static func files(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// A short mono WAV whose samples depend on `seed`, so every seed gives different bytes.
    static func wav(seed: Int, seconds: Double = 0.3) -> Data {
        WAV.sine(frequency: 200 + Double(seed * 7 % 1500), seconds: seconds, sampleRate: 11025, channels: 1).data()
    }

    /// A WAV whose header announces 2 s but that holds 0.4 s: a transfer that broke off.
    static func truncatedWAV(seed: Int) -> Data {
        let full = wav(seed: seed, seconds: 2)
        return full.prefix(44 + Int(0.4 * 11025) * 2)
    }

    // MARK: The storm

    enum Kind: Sendable { case good, duplicate, sameName, notAudio, truncated }

    struct Drop: Sendable {
        var name: String
        var bytes: Data
        var kind: Kind
        var inbox: Int
        /// 0: chunks with pauses; 1: written as NAME.part, then renamed; 2: written in tmpfs, then copied in;
        /// 3: written, closed, reopened and appended to.
        var style: Int
    }

    /// Writes `bytes` slowly, as a network transfer does.
    static func write(_ drop: Drop, into inbox: URL, scratch: URL) async throws {
        let final = inbox.appendingPathComponent(drop.name)
        let chunks = stride(from: 0, to: drop.bytes.count, by: 1500).map { drop.bytes[$0..<min($0 + 1500, drop.bytes.count)] }
        func slowly(_ url: URL, _ parts: some Sequence<Data.SubSequence>, append: Bool = false) async throws {
            if !append { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
            let handle = try FileHandle(forWritingTo: url)
            if append { try handle.seekToEnd() }
            for part in parts {
                try handle.write(contentsOf: part)
                await letTimePass(.milliseconds(Int.random(in: 2...25)), because: "a network transfer's pace")
            }
            try handle.close()
        }
        switch drop.style {
        case 1:
            let part = inbox.appendingPathComponent(drop.name + ".part")
            try await slowly(part, chunks)
            try FileManager.default.moveItem(at: part, to: final)
        case 2:
            let staged = scratch.appendingPathComponent(UUID().uuidString)
            try drop.bytes.write(to: staged)
            let data = try Data(contentsOf: staged)
            try await slowly(final, stride(from: 0, to: data.count, by: 4096).map { data[$0..<min($0 + 4096, data.count)] })
            try FileManager.default.removeItem(at: staged)
        case 3:
            // A writer that closes the file and reopens it to append, while another descriptor of the same transfer
            // keeps it open for writing: the daemon must wait for that one too (its read lease is refused), however
            // long a loaded machine stretches the pause.
            let half = chunks.count / 2
            _ = FileManager.default.createFile(atPath: final.path, contents: nil)
            let holder = try FileHandle(forWritingTo: final)
            try await slowly(final, chunks.prefix(half), append: true)
            await letTimePass(.milliseconds(300), because: "the writer's pause between closing and reopening")
            try await slowly(final, chunks.dropFirst(half), append: true)
            try holder.close()
        default:
            try await slowly(final, chunks)
        }
    }

    @Test func aStormOfSlowWritersLosesNothingAndImportsOnlyWholeFiles() async throws {
        let d = try Daemon()
        let music = d.home.url.appendingPathComponent("Music")
        let inboxes = [music.appendingPathComponent("Inbox"), music.appendingPathComponent("KDE Connect")]
        // Settling 3 s against writers that pause 300 ms between closing and reopening: a loaded machine (this suite
        // runs beside others) once stretched a pause past a 1 s settle, and the half-written file was rightly taken.
        let (_, received, rejected) = try await Self.start(d, inboxes: inboxes, extra: "on-receive = \"add\"", settle: 3)
        let scratch = URL(fileURLWithPath: "/dev/shm/tonearm-storm-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var drops: [Drop] = []
        for i in 0..<140 { drops.append(Drop(name: "song \(i).wav", bytes: Self.wav(seed: i), kind: .good, inbox: i % 2, style: i % 4)) }
        for i in 0..<20 { drops.append(Drop(name: "copy of song \(i * 3).wav", bytes: Self.wav(seed: i * 3), kind: .duplicate, inbox: 1 - (i * 3) % 2, style: i % 4)) }
        // The same name in the other inbox, different bytes.
        for i in 0..<10 { drops.append(Drop(name: "song \(i * 2).wav", bytes: Self.wav(seed: 1000 + i), kind: .sameName, inbox: 1, style: i % 4)) }
        for i in 0..<20 {
            var junk = Data("this is not music \(i) ".utf8)
            junk.append(Data((0..<3000).map { _ in UInt8.random(in: 0...255) }))
            drops.append(Drop(name: i % 2 == 0 ? "track \(i).mp3" : "notes \(i).ogg", bytes: junk, kind: .notAudio, inbox: i % 2, style: i % 4))
        }
        for i in 0..<10 { drops.append(Drop(name: "broken \(i).wav", bytes: Self.truncatedWAV(seed: 2000 + i), kind: .truncated, inbox: i % 2, style: i % 4)) }
        #expect(drops.count == 200)

        let signals = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.shares))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, drop) in drops.shuffled().enumerated() {
                if index >= 24 { try await group.next() } // two dozen writers at a time
                group.addTask { try await Self.write(drop, into: inboxes[drop.inbox], scratch: scratch) }
            }
            try await group.waitForAll()
        }
        // Wait while files keep being handled: a loaded machine once took longer than a fixed 180 s with the daemon
        // still working through them. Only longer with none handled than the daemon's own bound on one file's checks
        // (a 30 s probe and a 120 s decode) counts as stuck; the log then says what it was doing.
        var handled = 0, lastChange = ContinuousClock.now
        try await d.waitFor("every file handled", timeout: .seconds(600)) {
            let now = signals.named("Received").count + signals.named("Rejected").count
            if now != handled { (handled, lastChange) = (now, .now) }
            if ContinuousClock.now - lastChange > .seconds(160) {
                Issue.record("no file handled for 160 s: \(handled) of \(drops.count)\ndaemon log:\n\(d.log.suffix(4000))")
                return true
            }
            return now >= drops.count
        }
        // One more file, dropped after every one of them was handled: the one watcher and the one import queue take
        // it after anything still due from the storm (a file taken twice, say), so once it is in, the counts are final.
        let last = "after the storm.wav"
        try Self.wav(seed: 0, seconds: 0.5).write(to: inboxes[0].appendingPathComponent(last))
        func isLast(_ signal: DBusSignal) -> Bool { signal.arguments.first?.stringValue?.hasSuffix("/after%20the%20storm.wav") == true }
        try await d.waitFor("the file after the storm received", timeout: .seconds(60)) { signals.named("Received").contains(where: isLast) }

        let receivedSignals = signals.named("Received").filter { !isLast($0) }.count
        let rejectedSignals = signals.named("Rejected").count
        #expect(receivedSignals + rejectedSignals == 200, "\(receivedSignals) received + \(rejectedSignals) rejected")
        // The inboxes are empty: everything was taken.
        for inbox in inboxes { #expect(Self.files(inbox).isEmpty, "left in \(inbox.lastPathComponent): \(Self.files(inbox))") }
        // Received holds each distinct good content exactly once, byte for byte, and nothing else.
        let wanted = Set(drops.filter { [.good, .sameName].contains($0.kind) }.map(\.bytes))
        var stored: [Data] = []
        for name in Self.files(received) where name != last { stored.append(try Data(contentsOf: received.appendingPathComponent(name))) }
        #expect(stored.count == wanted.count, "\(stored.count) files in Received, \(wanted.count) distinct good files sent")
        #expect(Set(stored) == wanted, "Received holds something that was not sent whole")
        #expect(Set(stored).count == stored.count, "a content is stored twice")
        // imported + duplicates + rejected = files in.
        let duplicates = receivedSignals - stored.count
        #expect(duplicates == 20, "\(duplicates) duplicates recognised")
        // Every reject is in Rejected beside its reason.
        let rejects = Self.files(rejected).filter { !$0.hasSuffix(".reason.txt") }
        #expect(rejects.count == 30, "\(rejects)")
        #expect(stored.count + duplicates + rejects.count == 200)
        for name in rejects {
            let note = try String(contentsOf: rejected.appendingPathComponent(name + ".reason.txt"), encoding: .utf8)
            #expect(note.contains("Reason: "), "\(name): \(note)")
        }
        #expect(signals.named("Rejected").allSatisfy { !($0.arguments[1].stringValue ?? "").isEmpty })
        let truncatedReasons = signals.named("Rejected").filter { ($0.arguments[0].stringValue ?? "").contains("broken") }
        #expect(truncatedReasons.count == 10 && truncatedReasons.allSatisfy { ($0.arguments[1].stringValue ?? "").contains("truncated") },
                "\(truncatedReasons.map { $0.arguments[1].stringValue ?? "" })")
        // The library knows the received files at once.
        let search = try await d.tonearm("library", "search", "title~song", "--json")
        let found = try JSONSerialization.jsonObject(with: Data(search.out.utf8)) as? [Any]
        #expect(found?.count ?? 0 >= 100, "\(search.out.prefix(300))")
        // The inboxes and Rejected are not part of the library: no reject shows up as a library failure.
        _ = try await d.tonearm("library", "scan")
        let failures = try await d.tonearm("library", "failures", "--json")
        #expect(failures.out.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(failures.out.prefix(500))")
    }

    @Test func filesDroppedWhileStoppedAreTakenAtStartAndPlayed() async throws {
        let d = try Daemon()
        let inbox = d.home.url.appendingPathComponent("Music/Inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try Self.wav(seed: 1, seconds: 2).write(to: inbox.appendingPathComponent("while away.wav"))
        try Data("junk".utf8).write(to: inbox.appendingPathComponent("junk.flac"))
        try Self.wav(seed: 2).write(to: inbox.appendingPathComponent("still downloading.wav.crdownload"))
        let (_, received, rejected) = try await Self.start(d)
        try await d.waitFor("taken at start", timeout: .seconds(60)) {
            // The note is written just after the file is set aside: wait for both.
            Self.files(received) == ["while away.wav"] && Self.files(rejected).contains("junk.flac")
                && Self.files(rejected).contains("junk.flac.reason.txt")
        }
        // The iOS behaviour by default: it plays.
        try await d.waitFor("it plays") { try await d.metadata()["xesam:url"]?.stringValue?.hasSuffix("/Received/while%20away.wav") == true }
        #expect(Self.files(inbox) == ["still downloading.wav.crdownload"], "a partial download is left alone")
        #expect(Self.files(rejected).contains("junk.flac.reason.txt"))
    }

    @Test func anInboxOnAnotherFileSystemIsEmptiedByCopyThenRemove() async throws {
        let d = try Daemon()
        let shm = URL(fileURLWithPath: "/dev/shm/tonearm-inbox-\(getpid())")
        try FileManager.default.createDirectory(at: shm, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: shm) }
        let (_, received, _) = try await Self.start(d, inboxes: [shm], extra: "on-receive = \"add\"", settle: 0.3)
        let bytes = Self.wav(seed: 9, seconds: 1)
        try bytes.write(to: shm.appendingPathComponent("over the wire.wav"))
        // Copied, fsynced and linked into Received first, then removed from the inbox: wait for both.
        try await d.waitFor("moved across") { Self.files(received) == ["over the wire.wav"] && Self.files(shm).isEmpty }
        #expect(try Data(contentsOf: received.appendingPathComponent("over the wire.wav")) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: received.path) == ["over the wire.wav"], "no temporary file left")
    }

    @Test func copyModeKeepsTheInboxAndDoesNotImportTwice() async throws {
        let d = try Daemon()
        let (inbox, received, rejected) = try await Self.start(d, extra: "import = \"copy\"\non-receive = \"queue\"", settle: 0.3)
        try Self.wav(seed: 3).write(to: inbox.appendingPathComponent("kept.wav"))
        try Data("not audio".utf8).write(to: inbox.appendingPathComponent("notes.mp3"))
        try await d.waitFor("copied") { Self.files(received) == ["kept.wav"] && Self.files(rejected) == ["notes.mp3.reason.txt"] }
        #expect(Self.files(inbox) == ["kept.wav", "notes.mp3"], "copy mode leaves what was sent where it was")
        try await d.waitFor("queued at the end") { try await d.tracks().count == 1 }
        _ = await d.terminate()
        let signals = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.shares))
        try await d.start()
        // Both files found again at start and handled: the song known by its bytes, the reject by its note.
        try await d.waitFor("kept.wav found again") { d.log.contains("kept.wav is already in the library") }
        try await d.waitFor("notes.mp3 refused again") { !signals.named("Rejected").isEmpty }
        #expect(Self.files(received) == ["kept.wav"], "the same bytes are not stored twice after a restart")
        #expect(Self.files(rejected) == ["notes.mp3.reason.txt"], "nor is a reject noted twice")
    }

    @Test func aSenderAnnouncingCompletionIsNotKeptWaiting() async throws {
        let d = try Daemon()
        let (inbox, received, _) = try await Self.start(d, extra: "on-receive = \"add\"", settle: 300)
        let file = inbox.appendingPathComponent("from phone.wav")
        try Self.wav(seed: 5).write(to: file)
        // Seen and left to settle (for 300 s): only the sender's word can bring it in now.
        try await d.waitFor("the file noticed") { d.log.contains("listening for KDE Connect and BlueZ transfers") && d.log.contains("from phone.wav arrived") }
        #expect(Self.files(received).isEmpty, "settling takes 300 s")
        // KDE Connect's share plugin says the transfer is done.
        let sender = try DBusConnection.connect(address: d.bus.address)
        defer { sender.close() }
        sender.emitSignal(path: "/modules/kdeconnect/devices/abc/share", interface: "org.kde.kdeconnect.device.share",
                          member: "shareReceived", arguments: [.string(file.absoluteString)])
        try await d.waitFor("taken at once") { Self.files(received) == ["from phone.wav"] }
    }

    @Test func aBluetoothTransferMarkedCompleteIsTakenAtOnce() async throws {
        let d = try Daemon()
        let (inbox, received, _) = try await Self.start(d, extra: "on-receive = \"add\"", settle: 300)
        let file = inbox.appendingPathComponent("over bluetooth.wav")
        try Self.wav(seed: 6).write(to: file)
        // A stand-in for BlueZ obexd: a Transfer1 object whose Status turns "complete".
        let obexd = try DBusConnection.connect(address: d.bus.address)
        defer { obexd.close() }
        let transfer = "/org/bluez/obex/server/session1/transfer7"
        obexd.export(path: transfer, handlers: [try FakeTransfer(filename: file.path)])
        try await d.waitFor("the file noticed") { d.log.contains("listening for KDE Connect and BlueZ transfers") && d.log.contains("over bluetooth.wav arrived") }
        #expect(Self.files(received).isEmpty)
        obexd.emitPropertiesChanged(path: transfer, interface: "org.bluez.obex.Transfer1", changed: ["Status": .string("complete")])
        try await d.waitFor("taken at once") { Self.files(received) == ["over bluetooth.wav"] }
    }

    @Test func openWithTheDaemonRunningAndStopped() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 30)
        let mid = d.media.file("b.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("Bee") + Ev.notes(8, ticks: 96) + Ev.end()]).write(to: mid)
        let junk = try d.garbage("junk.ogg")
        // Stopped: `tonearm open` starts the daemon.
        let first = try await d.tonearm("open", a, mid.path)
        #expect(first.status == 0, "\(first.out)")
        try await d.waitFor("the daemon runs and plays a.wav") { try await d.metadata()["xesam:title"]?.stringValue == "a" }
        #expect(try await d.tracks().count == 2)
        // Running: one batch after the current track; the bad one refused with its reason.
        let second = try await d.tonearm("open", mid.path, junk, "--json")
        #expect(second.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(second.out.utf8)) as? [String: Any]
        #expect((json?["tracks"] as? [Any])?.count == 1)
        #expect((json?["refused"] as? [[String: Any]])?.first?["uri"] as? String == Daemon.uri(junk))
        try await d.waitFor("b.mid plays") { try await d.metadata()["xesam:title"]?.stringValue == "Bee" }
        let nothing = try await d.tonearm("open", junk)
        #expect(nothing.status == 1)
        // MPRIS OpenUri takes the same path.
        do {
            _ = try await d.call("org.mpris.MediaPlayer2.Player", "OpenUri", [.string(Daemon.uri(junk))])
            Issue.record("OpenUri accepted random bytes")
        } catch let error as DBusError {
            #expect(error.name.hasPrefix("org.tonearm.Error."))
        }
        _ = await d.terminate()
        d.bus.stop()
    }

    // MARK: Export

    static func exportAndWait(_ d: Daemon, _ what: String, _ folder: URL, _ mode: String) async throws -> (path: String, error: String) {
        let signals = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.shares, member: "ExportFinished"))
        let reply = try await d.call(Self.shares, "Export", [.string(what), .string(folder.path), .string(mode)])
        let id = reply.first?.stringValue ?? ""
        try await d.waitFor("export \(mode) finished", timeout: .seconds(60)) {
            signals.signals.contains { $0.arguments.first?.stringValue == id }
        }
        let done = signals.signals.first { $0.arguments.first?.stringValue == id }!.arguments.map { $0.stringValue ?? "" }
        return (done[1], done[2])
    }

    static func tone(_ url: URL, _ chain: [String]) async throws {
        let tags = #"tags="title=\"Sent on\",artist=\"The Sharers\"""#
        let (_, err, status) = try await gstLaunch(["-q", "audiotestsrc", "num-buffers=60", "!",
            "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!", "taginject", tags, "!"] + chain + ["!", "filesink", "location=\(url.path)"])
        try #require(status == 0, "\(err)")
    }

    static func samples(_ url: URL) async throws -> Data {
        let raw = URL(fileURLWithPath: url.path + ".raw")
        defer { unlink(raw.path) }
        return try await decodedPCM(url, through: raw)
    }

    @Test func exportsPassThroughOrTranscodeAndLeaveNothingWhenTheyFail() async throws {
        let d = try Daemon()
        try await d.start()
        let out = d.media.url.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let ogg = d.media.file("sent.ogg")
        try await Self.tone(ogg, ["vorbisenc", "!", "oggmux"])
        let flac = d.media.file("sent.flac")
        try await Self.tone(flac, ["flacenc"])

        // Passthrough of a queued track by its id: the same samples, the same container.
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([ogg.absoluteString]), .bool(false)])
        let id = try await d.tracks()[0]
        let copy = try await Self.exportAndWait(d, id, out, "passthrough")
        #expect(copy.error == "" && copy.path == out.appendingPathComponent("sent.ogg").path, "\(copy)")
        let original = try await Self.samples(ogg)
        let copied = try await Self.samples(URL(fileURLWithPath: copy.path))
        #expect(original.count > 10_000 && original == copied)
        // Again: a free name, nothing replaced.
        let again = try await Self.exportAndWait(d, ogg.path, out, "")
        #expect(again.path == out.appendingPathComponent("sent (2).ogg").path)

        // Transcodes play and keep the tags.
        for format in ["mp3", "m4a", "opus"] {
            let made = try await Self.exportAndWait(d, flac.absoluteString, out, format)
            #expect(made.error == "", "\(format): \(made)")
            let (duration, tags) = try MediaProbe.probe(uri: URL(fileURLWithPath: made.path).absoluteString, timeout: .seconds(30))
            #expect((duration ?? 0) > 1_000_000_000 && tags.title == "Sent on" && tags.artists == ["The Sharers"], "\(format): \(tags)")
        }
        // The CLI.
        let cli = try await d.tonearm("export", flac.path, out.path, "--mode", "flac", "--json")
        #expect(cli.status == 0, "\(cli.out)")
        #expect(cli.out.contains("sent (2).flac") || cli.out.contains("sent.flac"))

        // Failures leave nothing: a stream broken half way, and bad arguments refused at once.
        let before = Set(Self.files(out))
        var broken = try Data(contentsOf: flac)
        broken.replaceSubrange((broken.count / 2)..<broken.count, with: Data(repeating: 0x5A, count: broken.count - broken.count / 2))
        let brokenURL = d.media.file("broken.flac")
        try broken.write(to: brokenURL)
        let failed = try await Self.exportAndWait(d, brokenURL.path, out, "ogg")
        if failed.error.isEmpty {
            // The decoder may skip bad frames; then the export is a valid, shorter file.
            #expect(FileManager.default.fileExists(atPath: failed.path))
        } else {
            #expect(failed.path.isEmpty)
        }
        for (what, folder, mode, name) in [(flac.path, "/nowhere", "ogg", "NoSuchFolder"), (flac.path, out.path, "wma", "InvalidArgs"),
                                           ("/nope.flac", out.path, "ogg", "NoSuchFile"), (d.media.file("junk").path, out.path, "", "NoSuchFile")] {
            do {
                _ = try await d.call(Self.shares, "Export", [.string(what), .string(folder), .string(mode)])
                Issue.record("Export(\(what), \(folder), \(mode)) was accepted")
            } catch let error as DBusError {
                #expect(error.name == "org.tonearm.Error." + name, "\(error)")
            }
        }
        let everything = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(everything.allSatisfy { !$0.hasPrefix(".") && !$0.hasSuffix(".part") }, "\(everything)")
        let after = Set(Self.files(out)).subtracting(before)
        #expect(after.count <= 1)
    }

    /// An idle daemon has not set GStreamer up yet: its first exports must still tell a MIDI file (copied as it is)
    /// and a WAV (passed through by its first bytes) from the rest.
    @Test func anIdleDaemonsFirstExportsKnowMIDIAndWAVByTheirBytes() async throws {
        let d = try Daemon()
        try await d.start()
        let out = d.media.url.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let mid = d.media.file("tune.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.name("Tune") + Ev.notes(8, ticks: 96) + Ev.end()]).write(to: mid)
        let midi = try await Self.exportAndWait(d, mid.path, out, "passthrough")
        #expect(midi.error == "" && midi.path == out.appendingPathComponent("tune.mid").path, "\(midi)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: midi.path)) == Data(contentsOf: mid), "copied byte for byte")
        let wav = URL(fileURLWithPath: try d.sine("tone.wav", seconds: 1))
        let copy = try await Self.exportAndWait(d, wav.path, out, "passthrough")
        #expect(copy.error == "" && copy.path == out.appendingPathComponent("tone.wav").path, "\(copy)")
    }

    @Test func aCancelledExportLeavesNothing() async throws {
        let d = try Daemon()
        try await d.start()
        let daemon = try #require(d.process?.pid)
        let out = d.media.url.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // An hour of mono encodes in a second or two, and this process may stall longer than that on a loaded machine:
        // the daemon is held (SIGSTOP) while the folder is looked at and the cancel is sent. An export that still ends
        // before its cancel is read is not what this test is about; its file goes and the next try begins.
        let long = try await d.longSine("long.wav", seconds: 3600)
        let finished = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.shares, member: "ExportFinished"))
        let progress = try await SignalRecorder(d.client, DBusMatchRule(interface: Self.shares, member: "ExportProgress"))
        func end(of id: String) async throws -> [String] {
            try await d.waitFor("export \(id) ended") { finished.signals.contains { $0.arguments.first?.stringValue == id } }
            return finished.signals.first { $0.arguments.first?.stringValue == id }!.arguments.map { $0.stringValue ?? "" }
        }
        for attempt in 1...5 {
            let reply = try await d.call(Self.shares, "Export", [.string(long), .string(out.path), .string("flac")])
            let id = reply.first?.stringValue ?? ""
            try await d.waitFor("progress is signalled") {
                progress.signals.contains { $0.arguments.first?.stringValue == id && ($0.arguments[1].doubleValue ?? 0) > 0 }
                    || finished.signals.contains { $0.arguments.first?.stringValue == id }
            }
            kill(daemon, SIGSTOP)
            let listing = try FileManager.default.contentsOfDirectory(atPath: out.path)
            let cancel = Task { try await d.call(Self.shares, "CancelExport", [.string(id)]) }
            kill(daemon, SIGCONT)
            let cancelled: Bool
            do {
                _ = try await cancel.value
                cancelled = true
            } catch let error as DBusError where error.name == "org.tonearm.Error.NoSuchExport" {
                cancelled = false
            }
            let ended = try await end(of: id)
            if !cancelled {
                // It finished first: a whole file, named as asked, and nothing else.
                #expect(ended[2].isEmpty && FileManager.default.fileExists(atPath: ended[1]), "\(ended)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == [URL(fileURLWithPath: ended[1]).lastPathComponent])
                try FileManager.default.removeItem(atPath: ended[1])
                print("attempt \(attempt): the export ended before its cancel was read")
                continue
            }
            #expect(listing.allSatisfy { $0.hasPrefix(".") }, "only a hidden temporary file while it runs: \(listing)")
            #expect(ended[2] == "org.tonearm.Error.Cancelled")
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
            return
        }
        Issue.record("five exports in a row ended before their cancel was read")
    }
}

/// org.bluez.obex.Transfer1 with just the Filename and Status properties.
struct FakeTransfer: DBusInterfaceHandler {
    let interface: DBusInterfaceDescription
    let filename: String

    init(filename: String) throws {
        self.filename = filename
        interface = try DBusInterfaceDescription.parse(xml: """
            <node><interface name="org.bluez.obex.Transfer1">
              <property name="Status" type="s" access="read"/><property name="Filename" type="s" access="read"/>
            </interface></node>
            """)[0]
    }

    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue] {
        throw DBusError.unknownMethod(method)
    }

    func get(_ property: String) async throws -> DBusValue {
        switch property {
        case "Filename": return .string(filename)
        case "Status": return .string("complete")
        default: throw DBusError.unknownProperty(property)
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws { throw DBusError.unknownProperty(property) }
}

import DBus
import DaemonHarness
import Foundation
import RawPaths
import TestSupport
import Testing
import Waveform

/// Player1.Waveform and `tonearm waveform` through the real daemon, real GStreamer and real files.
@Suite(.serialized, .timeLimit(.minutes(4))) struct WaveformTests {
    /// 40 pixels of 1,024 frames at 8 kHz: 10 of silence, 10 of a ±20,000 square burst, 20 of a ramp rising by 1 a
    /// frame (0 … 20,479).
    static func shapes(_ d: Daemon, _ name: String = "shapes.wav") throws -> String {
        var samples = [Int16](repeating: 0, count: 10 * 1024)
        samples += (0..<(10 * 1024)).map { $0 % 2 == 0 ? 20_000 : -20_000 }
        samples += (0..<(20 * 1024)).map { Int16($0) }
        let url = d.media.file(name)
        try WAV(sampleRate: 8000, channels: 1, samples: samples).write(to: url)
        return url.path
    }

    static func peaks(_ reply: [DBusValue]) throws -> (rate: UInt32, spp: UInt32, samples: UInt64, min: [Int16], max: [Int16]) {
        guard reply.count == 4, case .uint32(let rate) = reply[0], case .uint32(let spp) = reply[1],
              case .uint64(let samples) = reply[2], let pairs = reply[3].arrayValue else {
            throw Failure("unexpected reply \(reply)")
        }
        var lows: [Int16] = [], highs: [Int16] = []
        for pair in pairs {
            guard case .structure(let f) = pair, case .int16(let low) = f[0], case .int16(let high) = f[1] else { throw Failure("bad pair \(pair)") }
            lows.append(low)
            highs.append(high)
        }
        return (rate, spp, samples, lows, highs)
    }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    func waveform(_ d: Daemon, _ target: String, width: UInt32) async throws -> (rate: UInt32, spp: UInt32, samples: UInt64, min: [Int16], max: [Int16]) {
        try Self.peaks(try await d.call(Daemon.tonearm, "Waveform", [.string(target), .uint32(width)]))
    }

    func expectShapes(_ p: (rate: UInt32, spp: UInt32, samples: UInt64, min: [Int16], max: [Int16])) {
        #expect(p.rate == 8000 && p.spp == 1024 && p.samples == 40 * 1024 && p.min.count == 40)
        for x in 0..<10 { #expect(p.min[x] == 0 && p.max[x] == 0, "silence at \(x): \(p.min[x]) \(p.max[x])") }
        for x in 10..<20 { #expect(p.min[x] == -20_000 && p.max[x] == 20_000, "burst at \(x)") }
        for x in 20..<40 {
            #expect(p.min[x] == Int16((x - 20) * 1024) && p.max[x] == Int16((x - 19) * 1024 - 1), "ramp at \(x)")
        }
    }

    /// A file whose name is not UTF-8 (a Latin-1 `é`) is drawn by its URI, which Foundation's `URL.path` cannot name.
    @Test func aFileNamedInLatin1IsDrawnByItsURI() async throws {
        let d = try Daemon()
        let made = try Self.shapes(d)
        let song = RawPath(d.media.url.path).appending(Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
        try #require(RawPath(made).withCString { from in song.withCString { rename(from, $0) } } == 0)
        // Foundation cannot remove what it cannot name.
        defer { _ = song.withCString { unlink($0) } }
        #expect(song.uri.hasSuffix("/caf%E9.wav"))
        try await d.start()
        expectShapes(try await waveform(d, song.uri, width: 40))
    }

    @Test func peaksOfAGeneratedSignalAreAtTheRightPixelsForEveryKindOfTarget() async throws {
        let d = try Daemon()
        let path = try Self.shapes(d)
        try await d.start()
        expectShapes(try await waveform(d, path, width: 40))
        expectShapes(try await waveform(d, Daemon.uri(path), width: 40))
        // Width 0: the fine peaks, 256 frames a pair.
        let fine = try await waveform(d, path, width: 0)
        #expect(fine.spp == 256 && fine.min.count == 160 && fine.samples == 40 * 1024)
        // The current track ("") and a track id.
        let nothing = await #expect(throws: DBusError.self) { try await d.call(Daemon.tonearm, "Waveform", [.string(""), .uint32(40)]) }
        #expect(nothing?.name == "org.tonearm.Error.NothingPlaying")
        let ids = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([path]), .bool(false)])
        let id = try #require(ids.first?.arrayValue?.first?.stringValue)
        expectShapes(try await waveform(d, "", width: 40))
        expectShapes(try await waveform(d, id, width: 40))
        let unknown = await #expect(throws: DBusError.self) { try await d.call(Daemon.tonearm, "Waveform", [.string("/org/tonearm/track/999"), .uint32(40)]) }
        #expect(unknown?.name == "org.tonearm.Error.NoSuchTrack")
        let wide = await #expect(throws: DBusError.self) { try await d.call(Daemon.tonearm, "Waveform", [.string(path), .uint32(100_001)]) }
        #expect(wide?.name == "org.tonearm.Error.InvalidValue")
    }

    @Test func anMP3WithoutAXingHeaderIsBinnedBySamples() async throws {
        let d = try Daemon()
        // 1 s of silence, 1 s of a loud sine, 1 s of silence at 44.1 kHz, encoded with no xingmux.
        let rate = 44100
        var samples = [Int16](repeating: 0, count: rate)
        samples += (0..<rate).map { Int16(20_000 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        samples += [Int16](repeating: 0, count: rate)
        let wav = d.media.file("burst.wav")
        try WAV(sampleRate: rate, channels: 1, samples: samples).write(to: wav)
        let mp3 = d.media.file("burst.mp3")
        let encode = try await runProcess("/usr/bin/gst-launch-1.0", ["-q", "filesrc", "location=\(wav.path)", "!", "wavparse", "!",
                                                                      "audioconvert", "!", "lamemp3enc", "!", "filesink", "location=\(mp3.path)"])
        try #require(encode.status == 0, "\(encode.err)")
        let head = [UInt8](try Data(contentsOf: mp3).prefix(4096))
        #expect(head.starts(with: [0xFF]) && (head[1] & 0xE0) == 0xE0, "starts with a frame, no ID3 tag")
        for tag in ["Xing", "Info", "VBRI"] {
            #expect(!String(decoding: head, as: UTF8.self).contains(tag), "no \(tag) header")
        }
        try await d.start()
        let p = try await waveform(d, mp3.path, width: 30)
        // The encoder adds its delay and padding (a few frames of 1,152 samples) but never drops any.
        #expect(p.rate == 44100 && p.samples >= UInt64(3 * rate) && p.samples < UInt64(3 * rate + 6 * 1152), "\(p.samples) samples")
        let loud = (0..<30).map { max(abs(Int(p.min[$0])), abs(Int(p.max[$0]))) }
        for x in 12..<18 { #expect(loud[x] > 15_000, "burst at \(x): \(loud)") }
        for x in Array(1..<8) + Array(23..<29) { #expect(loud[x] < 500, "silence at \(x): \(loud)") }
    }

    @Test func badFilesGiveNamedErrors() async throws {
        let d = try Daemon()
        let garbage = try d.garbage("noise.ogg")
        // A valid Ogg Vorbis file cut off after its first 3,000 bytes.
        let ogg = d.media.file("whole.ogg")
        let encode = try await runProcess("/usr/bin/gst-launch-1.0", ["-q", "audiotestsrc", "num-buffers=100", "!", "audioconvert", "!",
                                                                      "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(ogg.path)"])
        try #require(encode.status == 0)
        let cut = d.media.file("cut.ogg")
        try Data(try Data(contentsOf: ogg).prefix(3000)).write(to: cut)
        let truncatedWAV = d.media.file("cut.wav")
        try Data(try Data(contentsOf: URL(fileURLWithPath: try Self.shapes(d))).prefix(5000)).write(to: truncatedWAV)
        try await d.start()
        for (target, name) in [(garbage, "CannotDecode"), (cut.path, "CannotDecode"), (truncatedWAV.path, "Truncated"),
                               (d.media.file("none.ogg").path, "NoSuchFile"), (d.media.url.path, "NotAFile"),
                               ("http://example.com/a.ogg", "UnsupportedScheme")] {
            let error = await #expect(throws: DBusError.self) { try await d.call(Daemon.tonearm, "Waveform", [.string(target), .uint32(10)]) }
            #expect(error?.name == "org.tonearm.Error." + name, "\(target): \(String(describing: error))")
        }
        // Still answering, and nothing was deleted.
        #expect(FileManager.default.fileExists(atPath: garbage) && FileManager.default.fileExists(atPath: cut.path))
        #expect(try await d.status() == "Stopped")
    }

    @Test func theSecondCallIsServedFromTheCacheByContent() async throws {
        let d = try Daemon()
        let path = try Self.shapes(d)
        try await d.start()
        expectShapes(try await waveform(d, path, width: 40))
        let folder = d.home.file("cache").appendingPathComponent("tonearm/waveforms")
        let entries = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".peaks") }
        try #require(entries.count == 1)
        let entry = folder.appendingPathComponent(entries[0])
        let written = try FileManager.default.attributesOfItem(atPath: entry.path)[.modificationDate] as? Date
        // Mark the entry: pixel 0 (silence) now says ±1234. A decode would say 0; the cache says 1234.
        var bytes = [UInt8](try Data(contentsOf: entry))
        bytes[16 + 24 ..< 16 + 28] = [0x2E, 0xFB, 0xD2, 0x04][...]  // -1234, 1234
        try Data(bytes).write(to: entry)
        let marked = try FileManager.default.attributesOfItem(atPath: entry.path)[.modificationDate] as? Date
        let again = try await waveform(d, path, width: 40)
        #expect(again.min[0] == -1234 && again.max[0] == 1234, "served from the cache")
        // A copy under another name has the same content: the same entry.
        let copy = d.media.file("copy.wav")
        try FileManager.default.copyItem(atPath: path, toPath: copy.path)
        #expect(try await waveform(d, copy.path, width: 40).max[0] == 1234)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".peaks") }.count == 1)
        #expect(try FileManager.default.attributesOfItem(atPath: entry.path)[.modificationDate] as? Date == marked)
        #expect(written != nil)
        // A damaged entry is decoded again and rewritten.
        try Data([1, 2, 3]).write(to: entry)
        expectShapes(try await waveform(d, path, width: 40))
        #expect(try AudiowaveformFormat.readDat(Array([UInt8](try Data(contentsOf: entry))[16...])).count == 160)
    }

    @Test func theCommandWritesPNGSVGJSONAndDat() async throws {
        let d = try Daemon()
        let path = try Self.shapes(d)
        try await d.start()
        let out = d.home.url
        let run = try await d.tonearm("waveform", path, "--width", "40", "--height", "100", "--png", out.appendingPathComponent("w.png").path,
                                      "--svg", out.appendingPathComponent("w.svg").path)
        #expect(run.status == 0, "\(run)")
        let image = try #require(DecodedPNG([UInt8](try Data(contentsOf: out.appendingPathComponent("w.png")))))
        #expect(image.width == 40 && image.height == 100)
        for x in 0..<10 { #expect(image.drawnRows(x) == [50], "silence at \(x)") }
        for x in 10..<20 { #expect(image.drawnRows(x).first == 19 && image.drawnRows(x).last == 80, "burst at \(x)") }
        for x in 20..<40 { #expect(image.drawnRows(x).last! <= 50 && image.drawnRows(x).first! < 50 - (x - 20), "ramp at \(x)") }
        #expect(try String(contentsOf: out.appendingPathComponent("w.svg"), encoding: .utf8).contains("<path d=\"M0,50L1,50"))

        // Full resolution by default for audiowaveform's formats.
        #expect(try await d.tonearm("waveform", path, "--json", out.appendingPathComponent("w.json").path,
                                    "--dat", out.appendingPathComponent("w.dat").path).status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("w.json"))) as? [String: Any])
        #expect(json["version"] as? Int == 2 && json["channels"] as? Int == 1 && json["bits"] as? Int == 16)
        #expect(json["sample_rate"] as? Int == 8000 && json["samples_per_pixel"] as? Int == 256 && json["length"] as? Int == 160)
        let data = try #require(json["data"] as? [Int])
        #expect(data.count == 320 && data[0..<80].allSatisfy { $0 == 0 } && data[80..<160].allSatisfy { abs($0) == 20_000 })
        let dat = try AudiowaveformFormat.readDat([UInt8](try Data(contentsOf: out.appendingPathComponent("w.dat"))))
        #expect(dat.count == 160 && dat.samplesPerPixel == 256 && dat.sampleRate == 8000)
        #expect(dat.minima.map(Int.init) == stride(from: 0, to: 320, by: 2).map { data[$0] })
        #expect(dat.maxima.map(Int.init) == stride(from: 1, to: 320, by: 2).map { data[$0] })

        // JSON to standard output; a bad file is the daemon's error (1), a bad option a bad argument (2).
        let piped = try await d.tonearm("waveform", path, "--width", "4", "--json", "-")
        #expect(piped.status == 0 && piped.out.hasPrefix("{\"version\":2"))
        #expect(try await d.tonearm("waveform", try d.garbage("junk.mp3"), "--json", "-").status == 1)
        #expect(try await d.tonearm("waveform", path, "--width", "0").status == 2)
        #expect(try await d.tonearm("waveform", d.media.file("missing.wav").path).status == 2)

        // A path that is not a regular file is written into, never replaced (an atomic rename would put a regular
        // file in place of /dev/null): a FIFO stays a FIFO and its reader gets the PNG. A folder is refused.
        let fifo = out.appendingPathComponent("w.fifo").path, copy = out.appendingPathComponent("from-fifo.png").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try ChildProcess("/bin/sh", ["-c", "cat '\(fifo)' > '\(copy)'"], captureOutput: false)
        let intoFifo = try await d.tonearm("waveform", path, "--width", "40", "--png", fifo)
        #expect(intoFifo.status == 0, "\(intoFifo)")
        #expect(await reader.wait() == 0)
        var info = stat()
        #expect(stat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: copy)).prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        let intoFolder = try await d.tonearm("waveform", path, "--png", out.path)
        #expect(intoFolder.status != 0 && FileManager.default.fileExists(atPath: out.path))
    }

    /// The command line for a tmux pane against this daemon.
    static func command(_ d: Daemon, _ arguments: [String]) -> [String] {
        let env = d.environment
        return ["env", "-u", "NO_COLOR", "DBUS_SESSION_BUS_ADDRESS=\(env["DBUS_SESSION_BUS_ADDRESS"]!)", "HOME=\(env["HOME"]!)", "TERM=xterm-256color",
                Daemon.binDirectory.appendingPathComponent("tonearm").path] + arguments
    }

    @Test func theTerminalViewsDrawTheWaveform() async throws {
        let d = try Daemon()
        // 30 s: alternating 5 s of silence and 5 s of a loud square wave, so both ▁ and █ cells show.
        var samples: [Int16] = []
        for block in 0..<6 { samples += (0..<40_000).map { block % 2 == 1 ? ($0 % 2 == 0 ? 30_000 : -30_000) : 0 } }
        let path = d.media.file("blocks.wav").path
        try WAV(sampleRate: 8000, channels: 1, samples: samples).write(to: URL(fileURLWithPath: path))
        try await d.start()

        let drawing = Tmux(socket: "tonearm-wave-\(getpid())")
        defer { drawing.killServer() }
        // The pane stays open after the command, so the drawing can be read.
        try await drawing.start(["sh", "-c", "\"$@\"; sleep 60", "sh"] + Self.command(d, ["waveform", path, "--rows", "4"]))
        try await drawing.waitFor("draws braille rows") { screen in
            let rows = screen.filter { $0.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) } }
            // Silent stretches are a centre line (dots in the middle rows only); loud ones fill every row.
            return rows.count == 4 && rows[0].contains("⣿") && screen.contains { $0.contains("0:00") && $0.contains("0:30") }
        }

        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray([path]), .bool(true)])
        try await d.waitFor("playing") { try await d.status() == "Playing" }
        let follow = Tmux(socket: "tonearm-follow-\(getpid())")
        defer { follow.killServer() }
        try await follow.start(Self.command(d, ["status", "--follow"]))
        try await follow.waitFor("shows the waveform as the bar") { screen in
            screen.contains { $0.contains("blocks") && $0.contains("[▁") && $0.contains("█") && !$0.contains("#") }
        }
        // The played part is coloured (green), the rest dim; once the position moves past the first loud block,
        // green cells include a full block.
        var coloured = ""
        let ok = try await eventually(timeout: .seconds(30)) {
            coloured = try await runProcess("/usr/bin/tmux", ["-L", follow.socket, "capture-pane", "-e", "-p", "-t", follow.session]).out
            guard let line = coloured.components(separatedBy: "\n").first(where: { $0.contains("blocks") }),
                  let green = line.range(of: "\u{1B}[32m"), let dim = line.range(of: "\u{1B}[2m") else { return false }
            return line[green.upperBound..<dim.lowerBound].contains("█")
        }
        #expect(ok, "coloured screen:\n\(coloured)")
    }
}

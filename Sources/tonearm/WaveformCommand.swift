import ArgumentParser
import DBus
import Foundation
import Waveform

/// Player1.Waveform for the command line.
enum WaveformClient {
    /// The peaks of `target` ("" the current track, a track id, a file URI or a path) at `width` pixels (0: full
    /// resolution). The daemon may decode the whole file first: the call waits up to two minutes.
    static func fetch(_ client: PlayerClient, target: String, width: Int) async throws -> WaveformPeaks {
        let reply = try await client.connection.call(destination: PlayerClient.busName, path: PlayerClient.objectPath,
                                                     interface: PlayerClient.Interface.tonearm, member: "Waveform",
                                                     arguments: [.string(target), .uint32(UInt32(clamping: width))],
                                                     timeout: .seconds(120))
        guard reply.count == 4, case .uint32(let rate) = reply[0], case .uint32(let spp) = reply[1],
              case .uint64(let samples) = reply[2], let pairs = reply[3].arrayValue else {
            throw CLIFailure.refused("unexpected reply from Waveform")
        }
        var lows: [Int16] = [], highs: [Int16] = []
        lows.reserveCapacity(pairs.count)
        highs.reserveCapacity(pairs.count)
        for pair in pairs {
            guard case .structure(let f) = pair, f.count == 2, case .int16(let low) = f[0], case .int16(let high) = f[1] else {
                throw CLIFailure.refused("unexpected peak in the reply from Waveform")
            }
            lows.append(low)
            highs.append(high)
        }
        return WaveformPeaks(sampleRate: Int(rate), samplesPerPixel: Int(spp), frames: Int(samples), minima: lows, maxima: highs)
    }
}

/// `tonearm waveform [TRACK|FILE] [--width N] [--png FILE|--svg FILE|--json FILE|--dat FILE]`.
struct WaveformCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waveform",
        abstract: "Draw a track's waveform in the terminal, or write it as PNG, SVG or audiowaveform data.",
        discussion: """
            TRACK is `current` (the default), a track id (/org/tonearm/track/N), a file or a file:// URI. The \
            daemon decodes the file once and keeps its peaks (cached by content); any width is then quick. \
            Without an output option the waveform is drawn in braille cells, --rows tall, as wide as the \
            terminal. --png and --svg draw --width × --height pixels (default 1000 × 200); --json and --dat \
            write BBC audiowaveform's formats (version 2, 16-bit, one channel) at full resolution (256 samples \
            a pixel) unless --width is given, for viewers such as peaks.js. FILE `-` is standard output. \
            Several outputs may be given at once.
            """
    )

    @Argument(help: ArgumentHelp("current, a track id, a file or a file:// URI.", valueName: "track-or-file"))
    var target: String = "current"

    @Option(help: "Pixels across (terminal: dot columns, two a cell).")
    var width: Int?

    @Option(help: "Pixels down for --png and --svg.")
    var height: Int = 200

    @Option(help: "Rows of braille cells in the terminal.")
    var rows: Int = 8

    @Option(help: ArgumentHelp("Write a PNG.", valueName: "file"))
    var png: String?

    @Option(help: ArgumentHelp("Write an SVG.", valueName: "file"))
    var svg: String?

    @Option(help: ArgumentHelp("Write audiowaveform JSON.", valueName: "file"))
    var json: String?

    @Option(help: ArgumentHelp("Write audiowaveform binary data.", valueName: "file"))
    var dat: String?

    @Option(help: ArgumentHelp("Waveform colour for --png and --svg.", valueName: "#rrggbb[aa]"))
    var colour: String = WaveformImage.defaultColour.hexRGB

    @Option(help: ArgumentHelp("Background for --png and --svg (default transparent).", valueName: "#rrggbb[aa]"))
    var background: String?

    func validate() throws {
        if let width, width < 1 || width > 100_000 { throw ValidationError("--width must be 1 to 100000") }
        if height < 1 || height > 10_000 { throw ValidationError("--height must be 1 to 10000") }
        if rows < 1 || rows > 200 { throw ValidationError("--rows must be 1 to 200") }
        if RGBA(hex: colour) == nil { throw ValidationError("--colour must be #rrggbb or #rrggbbaa") }
        if let background, RGBA(hex: background) == nil { throw ValidationError("--background must be #rrggbb or #rrggbbaa") }
        if [png, svg, json, dat].compactMap({ $0 }).filter({ $0 == "-" }).count > 1 {
            throw ValidationError("only one output can go to standard output (-)")
        }
    }

    func run() async throws {
        let wanted: String
        switch target {
        case "current", "": wanted = ""
        case let id where id.hasPrefix("/org/"): wanted = id
        default: wanted = try MediaLocation.uri(for: target, workingDirectory: MediaLocation.workingDirectoryBytes())
        }
        let client = try await PlayerClient.connectToRunningDaemon()
        var fetched: [Int: WaveformPeaks] = [:]
        func peaks(_ width: Int) async throws -> WaveformPeaks {
            if let known = fetched[width] { return known }
            let got = try await WaveformClient.fetch(client, target: wanted, width: width)
            fetched[width] = got
            return got
        }
        let fill = RGBA(hex: colour) ?? WaveformImage.defaultColour
        let backdrop = background.flatMap { RGBA(hex: $0) } ?? WaveformImage.defaultBackground
        let imageWidth = width ?? 1000
        if let png {
            do {
                try write(try WaveformImage.png(try await peaks(imageWidth), width: imageWidth, height: height,
                                                colour: fill, background: backdrop), to: png)
            } catch let failure as WaveformImage.Failure {
                throw CLIFailure.refused(failure.description)
            }
        }
        if let svg {
            try write(Array(WaveformImage.svg(try await peaks(imageWidth), width: imageWidth, height: height,
                                              colour: fill, background: backdrop).utf8), to: svg)
        }
        if let json { try write(Array(AudiowaveformFormat.json(try await peaks(width ?? 0)).utf8), to: json) }
        if let dat { try write(AudiowaveformFormat.dat(try await peaks(width ?? 0)), to: dat) }
        guard png == nil, svg == nil, json == nil, dat == nil else { return }

        let columns = width.map { max(1, ($0 + 1) / 2) } ?? max(10, (Output.terminalColumns ?? 80) - 1)
        let drawn = try await peaks(columns * 2)
        for line in TerminalWaveform.braille(drawn, columns: columns, rows: rows) { Output.line(Style.accent(line)) }
        let end = TimeText.format(microseconds: Int64(drawn.seconds * 1_000_000))
        let info = "\(drawn.sampleRate) Hz"
        let gap = max(1, columns - 4 - end.count - info.count)
        let left = "0:00", middle = info
        let pad = max(1, gap / 2)
        Output.line(Style.dim(left + String(repeating: " ", count: pad) + middle + String(repeating: " ", count: max(1, gap - pad)) + end))
    }

    /// Writes to `path` (`-`: standard output) in one go; a regular file appears whole or not at all. Anything else
    /// that exists there (/dev/null, a FIFO, a terminal) is written into, never replaced: an atomic write renames a
    /// new file over the path, which would put a regular file in place of /dev/null.
    private func write(_ bytes: [UInt8], to path: String) throws {
        if path == "-" {
            try Self.writeAll(bytes, to: 1, what: "standard output")
            return
        }
        let absolute = MediaLocation.absolutePath(path, relativeTo: MediaLocation.workingDirectory())
        var info = stat()
        if stat(absolute, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            guard info.st_mode & S_IFMT != S_IFDIR else { throw CLIFailure.refused("cannot write \(path): it is a folder") }
            let fd = open(absolute, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw CLIFailure.refused("cannot write \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            try Self.writeAll(bytes, to: fd, what: path)
        } else {
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: absolute), options: .atomic)
            } catch {
                throw CLIFailure.refused("cannot write \(path): \((error as NSError).localizedDescription)")
            }
        }
        // The written paths, unless standard output carries one of the outputs.
        if ![png, svg, json, dat].contains("-") { Output.line(absolute) }
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32, what: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw CLIFailure.refused("cannot write to \(what)") }
            offset += n
        }
    }
}

import Foundation
import RawPaths

/// Why some bytes are not a Standard MIDI File, saying what is wrong and where
/// ("track 3: chunk length 9000 runs past end of file at byte 812").
public struct SMFError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads Standard MIDI Files (formats 0, 1 and 2; running status; SysEx; meta events; both time divisions),
/// also inside a RIFF `RMID` wrapper.
public enum SMFReader {
    /// Parses a whole file.
    public static func read(contentsOf url: URL) throws(SMFError) -> StandardMIDIFile {
        guard let path = RawPath(fileURL: url) else { throw SMFError("not a file URL: \(url.absoluteString)") }
        return try read(contentsOf: path)
    }

    /// The file named by its path's bytes (which need not be UTF-8).
    public static func read(contentsOf path: RawPath) throws(SMFError) -> StandardMIDIFile {
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(path)
        } catch {
            throw SMFError(error.message)
        }
        return try read(bytes)
    }

    /// Parses the bytes of a file.
    public static func read(_ bytes: [UInt8]) throws(SMFError) -> StandardMIDIFile {
        if bytes.isEmpty { throw SMFError("not a Standard MIDI File: the file is empty (0 bytes)") }
        if let range = riffData(bytes) {
            var parser = Parser(bytes: bytes, start: range.lowerBound, end: range.upperBound)
            return try parser.file()
        }
        var parser = Parser(bytes: bytes, start: 0, end: bytes.count)
        return try parser.file()
    }

    /// Whether a file starting with these bytes is a MIDI file by content (`MThd`, or RIFF `RMID`).
    public static func hasMIDISignature(_ prefix: [UInt8]) -> Bool {
        if prefix.count >= 4, prefix[0..<4].elementsEqual("MThd".utf8) { return true }
        return prefix.count >= 12 && prefix[0..<4].elementsEqual("RIFF".utf8) && prefix[8..<12].elementsEqual("RMID".utf8)
    }

    /// The range of the SMF inside a RIFF `RMID` file's `data` chunk.
    static func riffData(_ b: [UInt8]) -> Range<Int>? {
        guard b.count >= 12, b[0..<4].elementsEqual("RIFF".utf8), b[8..<12].elementsEqual("RMID".utf8) else { return nil }
        var offset = 12
        while offset + 8 <= b.count {
            let size = Int(b[offset + 4]) | Int(b[offset + 5]) << 8 | Int(b[offset + 6]) << 16 | Int(b[offset + 7]) << 24
            if b[offset..<offset + 4].elementsEqual("data".utf8) {
                return offset + 8 ..< min(b.count, offset + 8 + size)
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    private struct Parser {
        let bytes: [UInt8]
        let start: Int
        let end: Int

        mutating func file() throws(SMFError) -> StandardMIDIFile {
            let b = bytes
            let size = end - start
            guard size >= 4, b[start..<start + 4].elementsEqual("MThd".utf8) else {
                throw SMFError("not a Standard MIDI File: header chunk is \(Self.describeID(b[start..<min(end, start + 4)]))")
            }
            guard size >= 14 else {
                throw SMFError("the file ends inside the header chunk at byte \(end)")
            }
            let length = u32(start + 4)
            guard length >= 6 else { throw SMFError("header chunk length \(length) is shorter than 6 bytes") }
            guard start + 8 + length <= end else {
                throw SMFError("header chunk length \(length) runs past end of file at byte \(end)")
            }
            let format = u16(start + 8)
            let trackCount = u16(start + 10)
            let rawDivision = u16(start + 12)
            guard format <= 2 else { throw SMFError("unknown format \(format) (formats 0, 1 and 2 exist)") }
            guard trackCount > 0 else { throw SMFError("the header announces no tracks") }
            if format == 0, trackCount != 1 {
                throw SMFError("format 0 holds exactly one track, but the header announces \(trackCount)")
            }
            let division: StandardMIDIFile.Division
            if rawDivision & 0x8000 != 0 {
                let fps = -Int(Int8(bitPattern: UInt8(rawDivision >> 8)))
                let tpf = rawDivision & 0xFF
                guard [24, 25, 29, 30].contains(fps) else {
                    throw SMFError("SMPTE time division with \(fps) frames per second (24, 25, 29 and 30 exist)")
                }
                guard tpf > 0 else { throw SMFError("SMPTE time division with 0 ticks per frame") }
                division = .smpte(framesPerSecond: fps, ticksPerFrame: tpf)
            } else {
                guard rawDivision > 0 else { throw SMFError("time division of 0 ticks per quarter note") }
                division = .ticksPerQuarter(rawDivision)
            }

            var tracks: [MIDITrack] = []
            var offset = start + 8 + length
            while tracks.count < trackCount {
                let number = tracks.count + 1
                guard offset < end else {
                    throw SMFError("the header announces \(trackCount) tracks, but the file ends after \(tracks.count) at byte \(end)")
                }
                guard offset + 8 <= end else {
                    throw SMFError("track \(number): the file ends inside the chunk header at byte \(end)")
                }
                let id = b[offset..<offset + 4]
                let chunkLength = u32(offset + 4)
                let isTrack = id.elementsEqual("MTrk".utf8)
                guard isTrack || id.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw SMFError("track \(number): expected an 'MTrk' chunk at byte \(offset), found \(Self.describeID(id))")
                }
                guard offset + 8 + chunkLength <= end else {
                    let what = isTrack ? "track \(number): chunk length" : "chunk \(Self.describeID(id)) before track \(number): length"
                    throw SMFError("\(what) \(chunkLength) runs past end of file at byte \(end)")
                }
                if isTrack {
                    tracks.append(try track(number, from: offset + 8, to: offset + 8 + chunkLength))
                }
                // Chunks of unknown types are skipped, as the format asks.
                offset += 8 + chunkLength
            }
            return StandardMIDIFile(format: format, division: division, tracks: tracks)
        }

        func track(_ number: Int, from first: Int, to last: Int) throws(SMFError) -> MIDITrack {
            let b = bytes
            var events: [MIDIEvent] = []
            events.reserveCapacity((last - first) / 3)
            var pos = first
            var tick = 0
            var running: UInt8?
            while pos < last {
                let delta = try quantity(number, at: &pos, limit: last, what: "delta time")
                tick += delta
                guard pos < last else {
                    throw SMFError("track \(number): an event is missing after the delta time at byte \(pos)")
                }
                let eventStart = pos
                var status = b[pos]
                if status < 0x80 {
                    guard let running else {
                        throw SMFError("track \(number): data byte 0x\(Self.hex(status)) at byte \(pos) without a running status")
                    }
                    status = running
                } else {
                    pos += 1
                }
                switch status {
                case 0x80...0xEF:
                    let count = (status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0) ? 1 : 2
                    guard pos + count <= last else {
                        throw SMFError("track \(number): the event at byte \(eventStart) runs past the end of the track at byte \(last)")
                    }
                    let data = Array(b[pos..<pos + count])
                    if let bad = data.first(where: { $0 >= 0x80 }) {
                        throw SMFError("track \(number): the 0x\(Self.hex(status)) message at byte \(eventStart) has a data byte 0x\(Self.hex(bad)) with its top bit set")
                    }
                    pos += count
                    running = status
                    events.append(MIDIEvent(tick: tick, kind: .channel(status: status, data: data)))
                case 0xF0, 0xF7:
                    let length = try quantity(number, at: &pos, limit: last, what: "SysEx length")
                    guard pos + length <= last else {
                        throw SMFError("track \(number): the SysEx event at byte \(eventStart) (length \(length)) runs past the end of the track at byte \(last)")
                    }
                    events.append(MIDIEvent(tick: tick, kind: .sysex(status: status, data: Array(b[pos..<pos + length]))))
                    pos += length
                case 0xFF:
                    guard pos < last else {
                        throw SMFError("track \(number): the meta event at byte \(eventStart) runs past the end of the track at byte \(last)")
                    }
                    let type = b[pos]
                    pos += 1
                    let length = try quantity(number, at: &pos, limit: last, what: "meta event length")
                    guard pos + length <= last else {
                        throw SMFError("track \(number): the meta event 0x\(Self.hex(type)) at byte \(eventStart) (length \(length)) runs past the end of the track at byte \(last)")
                    }
                    events.append(MIDIEvent(tick: tick, kind: .meta(type: type, data: Array(b[pos..<pos + length]))))
                    pos += length
                    if type == MIDIEvent.Meta.endOfTrack { return MIDITrack(events: events, hasEndOfTrack: true) }
                default:
                    throw SMFError("track \(number): undefined status byte 0x\(Self.hex(status)) at byte \(eventStart)")
                }
            }
            return MIDITrack(events: events, hasEndOfTrack: false)
        }

        /// A variable-length quantity (at most 4 bytes).
        func quantity(_ track: Int, at pos: inout Int, limit: Int, what: String) throws(SMFError) -> Int {
            let begin = pos
            var value = 0
            for _ in 0..<4 {
                guard pos < limit else {
                    throw SMFError("track \(track): the \(what) at byte \(begin) runs past the end of the track at byte \(limit)")
                }
                let byte = bytes[pos]
                pos += 1
                value = value << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { return value }
            }
            throw SMFError("track \(track): the \(what) at byte \(begin) is longer than 4 bytes")
        }

        func u32(_ at: Int) -> Int {
            Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        }

        func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }

        static func hex(_ byte: UInt8) -> String {
            let s = String(byte, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }

        /// A chunk id as a person reads it: 'RIFF', or its bytes in hex when they are not text.
        static func describeID(_ id: ArraySlice<UInt8>) -> String {
            if id.isEmpty { return "missing" }
            if id.allSatisfy({ (0x20...0x7E).contains($0) }) { return "'" + String(decoding: id, as: UTF8.self) + "'" }
            return "bytes " + id.map { hex($0) }.joined(separator: " ")
        }
    }
}

/// Whole-file reads with errors a person can act on.
enum FileBytes {
    struct Failure: Error { let message: String }

    /// Real MIDI files are kilobytes; a huge file with a MIDI name is not read into memory.
    static let limit = 64 * 1_048_576

    static func read(_ raw: RawPath) throws(Failure) -> [UInt8] {
        let path = raw.string
        let fd = raw.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) } // a FIFO must not block the open
        guard fd >= 0 else { throw Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(message: "not a file: \(path)") }
        guard info.st_size <= limit else {
            throw Failure(message: "\(info.st_size / 1_048_576) MB is too large for a Standard MIDI File (the limit is \(limit / 1_048_576) MB)")
        }
        var out = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < out.count {
            let n = out.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                if n < 0 { throw Failure(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
                break // the file shrank while we read it
            }
            done += n
        }
        if done < out.count { out.removeLast(out.count - done) }
        return out
    }
}

import Foundation
import RawPaths
import TagFields
import TonearmCore

/// What a file's tags and container say.
struct FileTags: Sendable, Equatable {
    var title: String
    var artist = ""
    var album = ""
    var albumArtist: String?
    var genre: String?
    var year: Int?
    var trackNumber: Int?
    var discNumber: Int?
    var duration: Double = 0
    /// Embedded cover image bytes (front cover preferred).
    var picture: [UInt8]?
    /// REPLAYGAIN_* / R128_* gains from the tags (TagLib's property map, every format).
    var loudness: TrackLoudness?
    /// MUSICBRAINZ_* ids (TagLib's property map, every format).
    var musicBrainz: MusicBrainzIDs?
}

/// Reads tags with TagLib's C API, plus what that API lacks (album artist, disc number, pictures, exact lengths,
/// truncation) from the containers themselves: ID3v2, FLAC metadata blocks, Ogg Vorbis/Opus headers, RIFF/WAVE,
/// MPEG audio frame headers and MP4 atoms. Safe to call from several threads at once.
enum TagReader {
    /// Extensions worth handing to TagLib (what TagLib 1.13 reads, less video containers).
    static let audioExtensions: Set<String> = [
        "mp3", "mp2", "flac", "ogg", "oga", "opus", "spx", "mpc", "wv", "tta", "m4a", "m4b", "m4p", "m4r", "mp4",
        "wma", "asf", "aif", "aiff", "afc", "aifc", "wav", "wave", "ape", "mod", "s3m", "it", "xm",
    ]

    /// What is trimmed from both ends of a tag value. Built once: `CharacterSet.union` is costly, and tags are
    /// read by the thousand in a scan.
    private static let trimmedCharacters = CharacterSet.whitespacesAndNewlines.union(.controlCharacters)

    /// `text` without leading and trailing `trimmedCharacters`. Most values have none, and checking the two ends
    /// is much cheaper than Foundation's trimming, so that runs only when there is something to trim.
    static func trimmed(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return text }
        if !trimmedCharacters.contains(first), !trimmedCharacters.contains(last) { return text }
        return text.trimmingCharacters(in: trimmedCharacters)
    }

    enum Outcome: Sendable, Equatable {
        case tags(FileTags)
        case failure(String)
    }

    static func read(_ path: RawPath, size: Int) -> Outcome {
        if size == 0 { return .failure("zero-byte file") }
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return .failure("cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let file = FileBytes(fd: fd, size: size)

        var container = ContainerInfo()
        switch path.lowercasedExtension {
        case "mp3", "mp2": container = parseMPEG(file)
        case "flac": container = parseFLAC(file, at: ID3v2.skip(file))
        case "ogg", "oga", "opus", "spx": container = parseOgg(file)
        case "wav", "wave": container = parseWAV(file)
        case "m4a", "m4b", "m4p", "m4r", "mp4": container = parseMP4(file)
        default: break
        }
        if let failure = container.failure { return .failure(failure) }

        guard let read = path.withCString(TagFields.readFile) else {
            return .failure("not an audio file TagLib can read")
        }
        guard read.sampleRate > 0 else { return .failure("not an audio file TagLib can read: no audio stream found") }
        let duration = container.duration ?? Double(read.lengthSeconds)
        guard duration > 0 else { return .failure("no audio: the file's length is zero") }

        var tags = FileTags(title: path.stem)
        let title = trimmed(read.title)
        if !title.isEmpty { tags.title = title }
        tags.artist = trimmed(read.artist)
        tags.album = trimmed(read.album)
        let genre = trimmed(read.genre)
        tags.genre = genre.isEmpty ? nil : genre
        tags.year = read.year > 0 ? read.year : container.year
        tags.trackNumber = read.track > 0 ? read.track : nil
        tags.albumArtist = container.albumArtist.flatMap { $0.isEmpty ? nil : $0 }
        tags.discNumber = container.discNumber
        tags.duration = duration
        tags.picture = container.picture
        tags.loudness = TrackLoudness(tagFields: read.fields)
        tags.musicBrainz = MusicBrainzIDs(tagFields: read.fields)
        return .tags(tags)
    }
}

/// Positional reads of an open file.
struct FileBytes {
    let fd: Int32
    let size: Int

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    func read(_ offset: Int, _ count: Int) -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let n = min(count, size - offset)
        var out = [UInt8](repeating: 0, count: n)
        var done = 0
        while done < n {
            let r = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, n - done, off_t(offset + done)) }
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { break }
            done += r
        }
        if done < n { out.removeLast(n - done) }
        return out
    }
}

/// What the container adds to TagLib's answers.
struct ContainerInfo {
    var duration: Double?
    var albumArtist: String?
    var discNumber: Int?
    var year: Int?
    var picture: [UInt8]?
    /// Set when the file is unusable (truncated, no audio frames).
    var failure: String?

    /// Reads the Vorbis comment fields TagLib's C API does not give.
    mutating func take(vorbisComments comments: [(String, String)]) {
        for (key, value) in comments {
            switch key {
            case "ALBUMARTIST", "ALBUM ARTIST", "ALBUM_ARTIST":
                if albumArtist == nil { albumArtist = value }
            case "DISCNUMBER":
                if discNumber == nil { discNumber = leadingNumber(value) }
            case "DATE", "YEAR", "ORIGINALDATE":
                if year == nil, let y = leadingNumber(value), y > 0 { year = y }
            case "METADATA_BLOCK_PICTURE":
                if picture == nil, let block = Data(base64Encoded: value, options: .ignoreUnknownCharacters) {
                    picture = flacPicture([UInt8](block))?.data
                }
            default: break
            }
        }
    }
}

// MARK: - Helpers

func leadingNumber(_ text: String) -> Int? {
    let digits = text.trimmingCharacters(in: .whitespaces).prefix { $0.isASCII && $0.isNumber }
    guard let n = Int(digits), n > 0 else { return nil }
    return n
}

private func be32(_ b: [UInt8], _ o: Int) -> Int {
    Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
}

private func le32(_ b: [UInt8], _ o: Int) -> Int {
    Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24
}

private func le64(_ b: [UInt8], _ o: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[o + $1]) << (8 * UInt64($1)) }
}

private func ascii(_ b: [UInt8], _ o: Int, _ n: Int) -> String {
    guard o >= 0, o + n <= b.count else { return "" }
    return String(decoding: b[o..<(o + n)], as: UTF8.self)
}

/// A Vorbis comment block (after any packet type prefix): little-endian lengths, `KEY=value` entries.
func parseVorbisComments(_ b: [UInt8], at start: Int) -> [(String, String)] {
    var o = start
    guard o + 4 <= b.count else { return [] }
    let vendor = le32(b, o)
    o += 4 + vendor
    guard vendor >= 0, o + 4 <= b.count else { return [] }
    let count = le32(b, o)
    o += 4
    var out: [(String, String)] = []
    for _ in 0..<min(count, 100_000) {
        guard o + 4 <= b.count else { break }
        let n = le32(b, o)
        o += 4
        guard n >= 0, o + n <= b.count else { break }
        let entry = b[o..<(o + n)]
        o += n
        guard let eq = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
        let key = String(decoding: entry[entry.startIndex..<eq], as: UTF8.self).uppercased()
        let value = String(decoding: entry[(eq + 1)...], as: UTF8.self)
        out.append((key, value))
    }
    return out
}

/// A FLAC METADATA_BLOCK_PICTURE body: picture type and image bytes.
func flacPicture(_ b: [UInt8]) -> (type: Int, data: [UInt8])? {
    guard b.count >= 32 else { return nil }
    let type = be32(b, 0)
    var o = 4
    let mime = be32(b, o); o += 4 + mime
    guard o + 4 <= b.count else { return nil }
    let desc = be32(b, o); o += 4 + desc
    o += 16
    guard o + 4 <= b.count else { return nil }
    let n = be32(b, o); o += 4
    guard n > 0, o + n <= b.count else { return nil }
    return (type, Array(b[o..<(o + n)]))
}

// MARK: - ID3v2

enum ID3v2 {
    /// Where the audio starts after a leading ID3v2 tag (0 when there is none).
    static func skip(_ f: FileBytes) -> Int {
        let h = f.read(0, 10)
        guard h.count == 10, ascii(h, 0, 3) == "ID3" else { return 0 }
        let size = syncsafe(h, 6)
        return 10 + size + (h[5] & 0x10 != 0 ? 10 : 0)
    }

    static func syncsafe(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o] & 0x7F) << 21 | Int(b[o + 1] & 0x7F) << 14 | Int(b[o + 2] & 0x7F) << 7 | Int(b[o + 3] & 0x7F)
    }

    static func removeUnsynchronisation(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            out.append(b[i])
            if b[i] == 0xFF, i + 1 < b.count, b[i + 1] == 0 { i += 1 }
            i += 1
        }
        return out
    }

    /// Reads album artist, disc number, year and the (front) cover from a leading ID3v2 tag.
    static func parse(_ f: FileBytes, into info: inout ContainerInfo) {
        let h = f.read(0, 10)
        guard h.count == 10, ascii(h, 0, 3) == "ID3" else { return }
        let version = Int(h[3]), flags = h[5]
        guard (2...4).contains(version) else { return }
        let size = syncsafe(h, 6)
        var body = f.read(10, min(size, 64 << 20))
        if version < 4 && flags & 0x80 != 0 { body = removeUnsynchronisation(body) }
        var o = 0
        if flags & 0x40 != 0, version >= 3, body.count >= 4 {
            o = version == 3 ? be32(body, 0) + 4 : syncsafe(body, 0)
        }
        var pictures: [(type: Int, data: [UInt8])] = []
        let headerSize = version == 2 ? 6 : 10
        while o + headerSize <= body.count {
            guard body[o] != 0 else { break }
            let id: String
            let frameSize: Int
            var formatFlags: UInt8 = 0
            if version == 2 {
                id = ascii(body, o, 3)
                frameSize = Int(body[o + 3]) << 16 | Int(body[o + 4]) << 8 | Int(body[o + 5])
            } else {
                id = ascii(body, o, 4)
                frameSize = version == 4 ? syncsafe(body, o + 4) : be32(body, o + 4)
                formatFlags = body[o + 9]
            }
            let start = o + headerSize
            guard frameSize > 0, start + frameSize <= body.count else { break }
            o = start + frameSize
            var data = Array(body[start..<(start + frameSize)])
            if version == 4 {
                if formatFlags & 0x0C != 0 { continue }  // compressed or encrypted
                if formatFlags & 0x01 != 0 { data = Array(data.dropFirst(4)) }
                if formatFlags & 0x02 != 0 { data = removeUnsynchronisation(data) }
            } else if version == 3 {
                if formatFlags & 0xC0 != 0 { continue }
                if formatFlags & 0x20 != 0 { data = Array(data.dropFirst()) }
            }
            switch id {
            case "TPE2", "TP2":
                if let text = text(data) { info.albumArtist = text }
            case "TPOS", "TPA":
                if let text = text(data) { info.discNumber = leadingNumber(text) }
            case "TDRC", "TYER", "TYE", "TDOR", "TORY":
                if info.year == nil, let text = text(data) { info.year = leadingNumber(text) }
            case "APIC", "PIC":
                if let picture = picture(data, v2: version == 2) { pictures.append(picture) }
            default: break
            }
        }
        info.picture = (pictures.first { $0.type == 3 } ?? pictures.first)?.data
    }

    /// The first value of a text frame.
    static func text(_ d: [UInt8]) -> String? {
        guard let encoding = d.first else { return nil }
        let value = decode(Array(d.dropFirst()), encoding: encoding)
        let first = value.split(separator: "\u{0}", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        let trimmed = first.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    static func decode(_ b: [UInt8], encoding: UInt8) -> String {
        switch encoding {
        case 0: return String(b.map { Character(Unicode.Scalar($0)) })
        case 3: return String(decoding: b, as: UTF8.self)
        default:
            var bigEndian = encoding == 2
            var bytes = b[...]
            if encoding == 1, bytes.count >= 2 {
                if bytes.starts(with: [0xFE, 0xFF]) { bigEndian = true; bytes = bytes.dropFirst(2) }
                else if bytes.starts(with: [0xFF, 0xFE]) { bigEndian = false; bytes = bytes.dropFirst(2) }
            }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = bytes.startIndex
            while i + 1 < bytes.endIndex {
                let a = UInt16(bytes[i]), c = UInt16(bytes[i + 1])
                units.append(bigEndian ? a << 8 | c : c << 8 | a)
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
    }

    /// APIC (v2.3/2.4) or PIC (v2.2): picture type and image bytes.
    static func picture(_ d: [UInt8], v2: Bool) -> (type: Int, data: [UInt8])? {
        guard d.count > 4 else { return nil }
        let encoding = d[0]
        var o = 1
        if v2 {
            o += 3
        } else {
            guard let end = d[o...].firstIndex(of: 0) else { return nil }
            o = end + 1
        }
        guard o < d.count else { return nil }
        let type = Int(d[o])
        o += 1
        // The description, terminated by one NUL (Latin-1, UTF-8) or two aligned NULs (UTF-16).
        if encoding == 1 || encoding == 2 {
            while o + 1 < d.count, !(d[o] == 0 && d[o + 1] == 0) { o += 2 }
            o += 2
        } else {
            guard let end = d[o...].firstIndex(of: 0) else { return nil }
            o = end + 1
        }
        guard o < d.count else { return nil }
        return (type, Array(d[o...]))
    }
}

// MARK: - Containers

/// MP3: an ID3v2 tag, then MPEG audio frames (three in a row must be found); Xing/Info/VBRI headers give exact
/// lengths and the byte count that shows truncation.
func parseMPEG(_ f: FileBytes) -> ContainerInfo {
    var info = ContainerInfo()
    ID3v2.parse(f, into: &info)
    let start = ID3v2.skip(f)
    let window = f.read(start, 256 * 1024)
    var found: (offset: Int, header: MPEGFrame)?
    var i = 0
    while i + 4 <= window.count {
        if window[i] == 0xFF, let frame = MPEGFrame(window, i) {
            var next = i + frame.length
            var ok = true
            for _ in 0..<2 {
                let header = next + 4 <= window.count ? Array(window[next..<(next + 4)]) : f.read(start + next, 4)
                guard header.count == 4, let other = MPEGFrame(header, 0), other.sameStream(as: frame) else {
                    ok = false
                    break
                }
                next += other.length
            }
            if ok { found = (i, frame); break }
        }
        i += 1
    }
    guard let (offset, frame) = found else {
        info.failure = "not an audio file: no MPEG audio frames found"
        return info
    }
    let first = f.read(start + offset, min(frame.length, 200))
    let xing = frame.sideInfoSize + 4
    if first.count >= xing + 16, ["Xing", "Info"].contains(ascii(first, xing, 4)) {
        let flags = be32(first, xing + 4)
        var o = xing + 8
        if flags & 1 != 0 {
            let frames = be32(first, o)
            o += 4
            if frames > 0 { info.duration = Double(frames * frame.samplesPerFrame) / Double(frame.sampleRate) }
        }
        if flags & 2 != 0 {
            let bytes = be32(first, o)
            let available = f.size - (start + offset)
            // Allow for an ID3v1 tag counted in, or padding left out.
            if bytes > 0, available + 1024 < bytes {
                info.failure = "truncated: the MP3 header promises \(bytes) bytes of audio, the file holds \(available)"
            }
        }
    } else if first.count >= 36 + 18, ascii(first, 36, 4) == "VBRI" {
        let frames = be32(first, 36 + 14)
        if frames > 0 { info.duration = Double(frames * frame.samplesPerFrame) / Double(frame.sampleRate) }
    }
    return info
}

struct MPEGFrame {
    var version: Int  // 1, 2, or 25
    var layer: Int
    var bitrate: Int  // kbit/s
    var sampleRate: Int
    var padding: Int
    var mono: Bool

    init?(_ b: [UInt8], _ o: Int) {
        guard o + 4 <= b.count, b[o] == 0xFF, b[o + 1] & 0xE0 == 0xE0 else { return nil }
        let v = (b[o + 1] >> 3) & 3, l = (b[o + 1] >> 1) & 3
        let bi = Int(b[o + 2] >> 4), si = Int((b[o + 2] >> 2) & 3)
        guard v != 1, l != 0, bi != 0, bi != 15, si != 3 else { return nil }
        version = v == 3 ? 1 : (v == 2 ? 2 : 25)
        layer = 4 - Int(l)
        let tables: [[Int]] = [
            [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
            [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
            [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
            [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
            [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
        ]
        let table = version == 1 ? layer - 1 : (layer == 1 ? 3 : 4)
        bitrate = tables[table][bi - 1]
        sampleRate = [44100, 48000, 32000][si] / (version == 1 ? 1 : (version == 2 ? 2 : 4))
        padding = Int((b[o + 2] >> 1) & 1)
        mono = b[o + 3] >> 6 == 3
    }

    var samplesPerFrame: Int { layer == 1 ? 384 : (layer == 3 && version != 1 ? 576 : 1152) }

    var length: Int {
        if layer == 1 { return (12 * bitrate * 1000 / sampleRate + padding) * 4 }
        return samplesPerFrame / 8 * bitrate * 1000 / sampleRate + padding
    }

    var sideInfoSize: Int { version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17) }

    func sameStream(as other: MPEGFrame) -> Bool {
        version == other.version && layer == other.layer && sampleRate == other.sampleRate
    }
}

/// FLAC: metadata blocks (STREAMINFO for the exact length, VORBIS_COMMENT, PICTURE); a file too short for its
/// blocks, or for the frames STREAMINFO promises at their minimum size, is truncated.
func parseFLAC(_ f: FileBytes, at start: Int) -> ContainerInfo {
    var info = ContainerInfo()
    guard ascii(f.read(start, 4), 0, 4) == "fLaC" else { return info }
    var o = start + 4
    var streamInfo: [UInt8] = []
    var pictures: [(type: Int, data: [UInt8])] = []
    while true {
        let h = f.read(o, 4)
        guard h.count == 4 else {
            info.failure = "truncated: the file ends inside its FLAC metadata"
            return info
        }
        let last = h[0] & 0x80 != 0, type = h[0] & 0x7F
        let length = Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
        guard o + 4 + length <= f.size else {
            info.failure = "truncated: the file ends inside its FLAC metadata"
            return info
        }
        switch type {
        case 0: streamInfo = f.read(o + 4, length)
        case 4: info.take(vorbisComments: parseVorbisComments(f.read(o + 4, length), at: 0))
        case 6: if let p = flacPicture(f.read(o + 4, length)) { pictures.append(p) }
        default: break
        }
        o += 4 + length
        if last { break }
    }
    if let p = pictures.first(where: { $0.type == 3 }) ?? pictures.first { info.picture = p.data }
    guard streamInfo.count >= 18 else { return info }
    let maxBlock = Int(streamInfo[2]) << 8 | Int(streamInfo[3])
    let minFrame = Int(streamInfo[4]) << 16 | Int(streamInfo[5]) << 8 | Int(streamInfo[6])
    let rate = Int(streamInfo[10]) << 12 | Int(streamInfo[11]) << 4 | Int(streamInfo[12] >> 4)
    let total = Int(streamInfo[13] & 0x0F) << 32 | be32(streamInfo, 14)
    if rate > 0, total > 0 { info.duration = Double(total) / Double(rate) }
    if total > 0, maxBlock > 0, minFrame > 0 {
        let frames = (total + maxBlock - 1) / maxBlock
        let audio = f.size - o
        if audio < frames * minFrame {
            info.failure = "truncated: \(audio) bytes of FLAC audio where at least \(frames * minFrame) are needed"
        }
    }
    return info
}

/// Ogg Vorbis/Opus: the identification and comment packets of the first stream, and the last page, which must be
/// complete and mark the end of the stream; its granule position gives the exact length.
func parseOgg(_ f: FileBytes) -> ContainerInfo {
    var info = ContainerInfo()
    guard ascii(f.read(0, 4), 0, 4) == "OggS" else { return info }
    var packets: [[UInt8]] = []
    var current: [UInt8] = []
    var serial: Int?
    var o = 0
    let limit = 16 << 20
    pages: while packets.count < 2, o < min(f.size, limit) {
        let h = f.read(o, 27)
        guard h.count == 27, ascii(h, 0, 4) == "OggS" else { break }
        let segments = Int(h[26])
        let table = f.read(o + 27, segments)
        guard table.count == segments else { break }
        let bodyLength = table.reduce(0) { $0 + Int($1) }
        let pageSerial = le32(h, 14)
        let body = f.read(o + 27 + segments, bodyLength)
        o += 27 + segments + bodyLength
        if serial == nil { serial = pageSerial }
        guard pageSerial == serial else { continue }
        var p = 0
        for lace in table {
            let n = Int(lace)
            guard p + n <= body.count else { break pages }
            current += body[p..<(p + n)]
            p += n
            if lace < 255 {
                packets.append(current)
                current = []
                if packets.count == 2 { break }
            }
        }
    }
    var rate = 0
    var preSkip = 0
    if let id = packets.first {
        if id.count >= 16, id[0] == 1, ascii(id, 1, 6) == "vorbis" {
            rate = le32(id, 12)
        } else if id.count >= 12, ascii(id, 0, 8) == "OpusHead" {
            rate = 48000
            preSkip = Int(id[10]) | Int(id[11]) << 8
        }
    }
    if packets.count == 2 {
        let comment = packets[1]
        if comment.count > 7, comment[0] == 3, ascii(comment, 1, 6) == "vorbis" {
            info.take(vorbisComments: parseVorbisComments(comment, at: 7))
        } else if ascii(comment, 0, 8) == "OpusTags" {
            info.take(vorbisComments: parseVorbisComments(comment, at: 8))
        }
    }
    // The last page.
    let tailLength = min(f.size, 128 * 1024)
    let tail = f.read(f.size - tailLength, tailLength)
    var lastPage: Int?
    var i = tail.count - 27
    while i >= 0 {
        if tail[i] == UInt8(ascii: "O"), ascii(tail, i, 4) == "OggS", tail[i + 4] == 0 { lastPage = i; break }
        i -= 1
    }
    guard let page = lastPage else {
        info.failure = "truncated: no complete Ogg page at the end of the file"
        return info
    }
    let segments = Int(tail[page + 26])
    guard page + 27 + segments <= tail.count else {
        info.failure = "truncated: the last Ogg page is cut off"
        return info
    }
    let bodyLength = tail[(page + 27)..<(page + 27 + segments)].reduce(0) { $0 + Int($1) }
    if page + 27 + segments + bodyLength > tail.count {
        info.failure = "truncated: the last Ogg page is cut off"
    } else if tail[page + 5] & 0x04 == 0 {
        info.failure = "truncated: the Ogg stream ends without its end-of-stream page"
    } else if rate > 0 {
        let granule = le64(tail, page + 6)
        if granule != UInt64.max, granule > UInt64(preSkip) {
            info.duration = Double(granule - UInt64(preSkip)) / Double(rate)
        }
    }
    return info
}

/// RIFF/WAVE: the data chunk's size gives the exact length and must fit in the file.
func parseWAV(_ f: FileBytes) -> ContainerInfo {
    var info = ContainerInfo()
    let h = f.read(0, 12)
    guard h.count == 12, ascii(h, 0, 4) == "RIFF", ascii(h, 8, 4) == "WAVE" else { return info }
    var o = 12
    var byteRate = 0
    while o + 8 <= f.size {
        let c = f.read(o, 8)
        guard c.count == 8 else { break }
        let id = ascii(c, 0, 4)
        let size = le32(c, 4)
        if id == "fmt " {
            let fmt = f.read(o + 8, 16)
            if fmt.count == 16 { byteRate = le32(fmt, 8) }
        } else if id == "data" {
            let available = f.size - (o + 8)
            if size != 0, size != 0xFFFF_FFFF, size > available {
                info.failure = "truncated: the data chunk declares \(size) bytes, the file holds \(available)"
            } else if byteRate > 0 {
                let bytes = (size == 0 || size == 0xFFFF_FFFF) ? available : size
                info.duration = Double(bytes) / Double(byteRate)
            }
            break
        }
        o += 8 + size + (size & 1)
    }
    return info
}

/// MP4/M4A: moov/mvhd for the exact length; moov/udta/meta/ilst for covr, aART and disk.
func parseMP4(_ f: FileBytes) -> ContainerInfo {
    var info = ContainerInfo()
    /// The child boxes within `range`: type and body range.
    func boxes(_ range: Range<Int>) -> [(String, Range<Int>)] {
        var out: [(String, Range<Int>)] = []
        var o = range.lowerBound
        while o + 8 <= range.upperBound, out.count < 10_000 {
            let h = f.read(o, 16)
            guard h.count >= 8 else { break }
            var size = be32(h, 0)
            var header = 8
            if size == 1, h.count == 16 {
                size = be32(h, 8) << 32 | be32(h, 12)
                header = 16
            } else if size == 0 {
                size = range.upperBound - o
            }
            guard size >= header, size <= range.upperBound - o else { break }
            out.append((ascii(h, 4, 4), (o + header)..<(o + size)))
            o += size
        }
        return out
    }
    guard let moov = boxes(0..<f.size).first(where: { $0.0 == "moov" })?.1 else { return info }
    let moovChildren = boxes(moov)
    if let mvhd = moovChildren.first(where: { $0.0 == "mvhd" })?.1 {
        let b = f.read(mvhd.lowerBound, 32)
        if b.count >= 32 {
            let (scale, duration) = b[0] == 1 ? (be32(b, 20), be32(b, 24) << 32 | be32(b, 28)) : (be32(b, 12), be32(b, 16))
            if scale > 0, duration > 0 { info.duration = Double(duration) / Double(scale) }
        }
    }
    guard let udta = moovChildren.first(where: { $0.0 == "udta" })?.1,
          let meta = boxes(udta).first(where: { $0.0 == "meta" })?.1,
          let ilst = boxes((meta.lowerBound + 4)..<meta.upperBound).first(where: { $0.0 == "ilst" })?.1 else { return info }
    for (type, range) in boxes(ilst) where ["covr", "aART", "disk"].contains(type) {
        guard let data = boxes(range).first(where: { $0.0 == "data" })?.1, data.count > 8, data.count < 64 << 20 else { continue }
        let payload = f.read(data.lowerBound + 8, data.count - 8)
        switch type {
        case "covr": if info.picture == nil, !payload.isEmpty { info.picture = payload }
        case "aART": info.albumArtist = String(decoding: payload, as: UTF8.self)
        default: if payload.count >= 4 { info.discNumber = (Int(payload[2]) << 8 | Int(payload[3])).nonZero }
        }
    }
    return info
}

private extension Int {
    var nonZero: Int? { self == 0 ? nil : self }
}

import Foundation
import Logging
import Synchronization
import TestSupport
import TonearmCore
@testable import LocalLibrary

/// Encoded test media, made once per process with gst-launch and copied where tests need it.
actor Media {
    static let shared = Media()

    private let folder = TemporaryDirectory("tonearm-library-media")
    private var made: [String: Task<URL, any Error>] = [:]
    private var count = 0

    enum Format: String {
        case flac, ogg, mp3, m4a

        var pipeline: [String] {
            switch self {
            case .flac: ["flacenc"]
            case .ogg: ["vorbisenc", "!", "oggmux"]
            // id3v2mux writes the tags; tests that need a picture prepend their own ID3v2 tag to an untagged file.
            case .mp3: ["lamemp3enc", "!", "xingmux", "!", "id3v2mux"]
            case .m4a: ["voaacenc", "!", "mp4mux"]
            }
        }
    }

    /// A file of `buffers` × 1024 samples at 44.1 kHz (130 ≈ 3.02 s), tagged through taginject when `tags` is
    /// not empty (values must not contain quotes or commas).
    func file(_ format: Format, tags: [(String, String)] = [], buffers: Int = 130) async throws -> URL {
        let key = "\(format)|\(buffers)|" + tags.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
        if let task = made[key] { return try await task.value }
        count += 1
        let url = folder.file("\(count).\(format.rawValue)")
        let task = Task { try await Self.encode(format, tags: tags, buffers: buffers, to: url) }
        made[key] = task
        return try await task.value
    }

    private static func encode(_ format: Format, tags: [(String, String)], buffers: Int, to url: URL) async throws -> URL {
        var arguments = ["-q", "audiotestsrc", "num-buffers=\(buffers)", "!", "audioconvert"]
        if !tags.isEmpty {
            let list = tags.map { key, value in
                ["track-number", "album-disc-number"].contains(key) ? "\(key)=(uint)\(value)"
                    : key == "date" ? "date=(date)\(value),datetime=(datetime)\(value)" : "\(key)=\\\"\(value)\\\""
            }.joined(separator: ",")
            arguments += ["!", "taginject", "tags=\"\(list)\""]
        }
        arguments += ["!"] + format.pipeline + ["!", "filesink", "location=\(url.path)"]
        let result = try await gstLaunch(arguments)
        guard result.status == 0, FileManager.default.fileExists(atPath: url.path) else {
            throw TonearmError(.failed, "gst-launch failed: \(result.err)")
        }
        return url
    }
}

/// An ID3v2.4 tag (UTF-8 text frames, optional APIC) to put in front of MPEG audio.
func id3v2Tag(text: [(String, String)], picture: [UInt8]? = nil) -> [UInt8] {
    func syncsafe(_ n: Int) -> [UInt8] { [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] }
    var frames: [UInt8] = []
    func frame(_ id: String, _ body: [UInt8]) {
        frames += Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
    }
    for (id, value) in text { frame(id, [3] + Array(value.utf8)) }
    if let picture {
        frame("APIC", [3] + Array("image/jpeg".utf8) + [0, 3] + Array("front".utf8) + [0] + picture)
    }
    return Array("ID3".utf8) + [4, 0, 0] + syncsafe(frames.count) + frames
}

/// Bytes that look like a JPEG to the art cache.
func fakeJPEG(_ seed: UInt8) -> [UInt8] {
    [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + (0..<200).map { UInt8(truncatingIfNeeded: Int($0) * 7 + Int(seed)) } + [0xFF, 0xD9]
}

func write(_ bytes: [UInt8], to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(bytes).write(to: url)
}

func copy(_ source: URL, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try? FileManager.default.removeItem(at: url)
    try FileManager.default.copyItem(at: source, to: url)
}

func wavBytes(seconds: Double, frequency: Double = 440) -> [UInt8] {
    [UInt8](WAV.sine(frequency: frequency, seconds: seconds, sampleRate: 22050, channels: 1).data())
}

/// A library under test: its music folder, database and art cache in one temporary folder.
final class Fixture: Sendable {
    let dir = TemporaryDirectory("tonearm-library")
    var music: URL { dir.file("music") }
    var art: URL { dir.file("art") }

    func open() throws -> LocalLibrary {
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        var logger = Logger(label: "library-test")
        logger.logLevel = .info
        return LocalLibrary(folders: [music], database: dir.file("data/library.sqlite"), artCache: ArtCache(folder: art),
                                logger: logger)
    }

    func url(_ relative: String) -> URL { music.appendingPathComponent(relative) }
}

/// What `makeLibrary` put where.
struct Expected {
    /// Relative paths (UTF-8 ones) of the files that must be indexed.
    var good: Set<String>
    /// Relative path → a fragment its failure reason must contain.
    var bad: [String: String]
    var folderCover: [UInt8]
    var embeddedCover: [UInt8]
    var flacCover: [UInt8]
}

/// The generated library of the issue: several formats, tags, embedded and folder art, untagged files, non-UTF-8
/// and unicode names, 10-deep nesting, a symlink loop, and bad files of several kinds.
func makeLibrary(_ fixture: Fixture) async throws -> Expected {
    let media = Media.shared
    var good = Set<String>()
    func put(_ source: URL, _ relative: String) throws {
        try copy(source, to: fixture.url(relative))
        good.insert(relative)
    }
    let jazz = [("album", "Kind of Blue"), ("album-artist", "Miles Davis"), ("genre", "Jazz"), ("date", "1959-08-17")]
    try put(try await media.file(.flac, tags: [("title", "So What"), ("artist", "Miles Davis"), ("track-number", "1")] + jazz),
            "Miles Davis/Kind of Blue/01 So What.flac")
    try put(try await media.file(.ogg, tags: [("title", "Freddie Freeloader"), ("artist", "Miles Davis"), ("track-number", "2")] + jazz),
            "Miles Davis/Kind of Blue/02 Freddie.ogg")
    // MP3 with an embedded APIC picture, album artist (TPE2) and disc (TPOS) from our own ID3v2 tag.
    let embedded = fakeJPEG(1)
    let plainMP3 = try await media.file(.mp3)
    let mp3 = id3v2Tag(text: [("TIT2", "Blue in Green"), ("TPE1", "Miles Davis"), ("TALB", "Kind of Blue"), ("TPE2", "Miles Davis"),
                              ("TRCK", "3"), ("TPOS", "1/1"), ("TDRC", "1959"), ("TCON", "Jazz")], picture: embedded)
        + [UInt8](try Data(contentsOf: plainMP3))
    try write(mp3, to: fixture.url("Miles Davis/Kind of Blue/03 Blue in Green.mp3"))
    good.insert("Miles Davis/Kind of Blue/03 Blue in Green.mp3")
    let folderCover = fakeJPEG(2)
    try write(folderCover, to: fixture.url("Miles Davis/Kind of Blue/Cover.JPG"))

    // Accents and case differ between tracks of one artist; disc 2 sorts after disc 1.
    let portrait = [("album", "Portrait in Jazz"), ("album-artist", "Bill Evans"), ("date", "1960-01-01")]
    try put(try await media.file(.flac, tags: [("title", "Autumn Leaves"), ("artist", "Bill Évans"), ("track-number", "2"),
                                                ("album-disc-number", "1")] + portrait), "Bill/Portrait/Autumn Leaves.flac")
    try put(try await media.file(.flac, tags: [("title", "Come Rain or Come Shine"), ("artist", "bill evans"), ("track-number", "1"),
                                                ("album-disc-number", "1")] + portrait), "Bill/Portrait/Come Rain.flac")
    try put(try await media.file(.mp3, tags: [("title", "Blue in Green (take 3)"), ("artist", "Bill Evans"), ("track-number", "1"),
                                               ("album-disc-number", "2")] + portrait), "Bill/Portrait/Bonus.mp3")
    // A FLAC with a PICTURE block: copy a tagged FLAC and splice one in.
    let flacCover = fakeJPEG(3)
    let tagged = [UInt8](try Data(contentsOf: try await media.file(.flac, tags: [("title", "Peace Piece"), ("artist", "Bill Evans"),
                                                                                 ("album", "Everybody Digs")])))
    try write(insertFLACPicture(tagged, picture: flacCover), to: fixture.url("Bill/Everybody Digs/Peace Piece.flac"))
    good.insert("Bill/Everybody Digs/Peace Piece.flac")

    // Untagged files of each format: titles from file names.
    try put(try await media.file(.ogg), "untagged/noise.ogg")
    try write(wavBytes(seconds: 1.5), to: fixture.url("untagged/Portrait.wav"))
    good.insert("untagged/Portrait.wav")
    if let m4a = try? await media.file(.m4a) { try put(m4a, "untagged/aac.m4a") }
    // Names: unicode, non-UTF-8 (Latin-1 é), nested ten deep.
    try put(try await media.file(.flac, tags: [("title", "Unicode Song"), ("artist", "Ünïcødé")]), "Ünïcødé/日本語 ♫.flac")
    try writeRaw(wavBytes(seconds: 1), folder: fixture.url("latin1"), name: Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
    let deep = (1...10).map { "d\($0)" }.joined(separator: "/") + "/deep.wav"
    try write(wavBytes(seconds: 1), to: fixture.url(deep))
    good.insert(deep)
    // Hidden entries and other files are ignored.
    try write(wavBytes(seconds: 1), to: fixture.url(".hidden/secret.wav"))
    try write(wavBytes(seconds: 1), to: fixture.url("untagged/.dotfile.wav"))
    try write(Array("liner notes".utf8), to: fixture.url("untagged/notes.txt"))
    // A symlink loop.
    try FileManager.default.createDirectory(at: fixture.url("loop"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: fixture.url("loop/back").path, withDestinationPath: "..")
    // Bad files.
    try write([], to: fixture.url("bad/empty.mp3"))
    let ogg = [UInt8](try Data(contentsOf: try await media.file(.ogg, buffers: 400)))
    try write(Array(ogg.prefix(ogg.count / 2)), to: fixture.url("bad/cut.ogg"))
    let flac = [UInt8](try Data(contentsOf: try await media.file(.flac, buffers: 400)))
    try write(Array(flac.prefix(flac.count / 2)), to: fixture.url("bad/cut.flac"))
    let wav = wavBytes(seconds: 2)
    try write(Array(wav.prefix(wav.count / 3)), to: fixture.url("bad/cut.wav"))
    var generator = SystemRandomNumberGenerator()
    try write((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: fixture.url("bad/random.mp3"))
    try write(Array("this is text, not audio".utf8), to: fixture.url("bad/text.flac"))

    return Expected(
        good: good,
        bad: [
            "bad/empty.mp3": "zero-byte file",
            "bad/cut.ogg": "truncated",
            "bad/cut.flac": "truncated",
            "bad/cut.wav": "truncated",
            "bad/random.mp3": "not an audio file",
            "bad/text.flac": "not an audio file",
            "loop/back": "loop",
        ],
        folderCover: folderCover, embeddedCover: embedded, flacCover: flacCover)
}

/// Adds a METADATA_BLOCK_PICTURE (front cover) after STREAMINFO.
func insertFLACPicture(_ flac: [UInt8], picture: [UInt8]) -> [UInt8] {
    func be32(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }
    let mime = Array("image/jpeg".utf8)
    let body = be32(3) + be32(mime.count) + mime + be32(0) + be32(1) + be32(1) + be32(24) + be32(0) + be32(picture.count) + picture
    // STREAMINFO is the first block (4-byte header + 34 bytes) and is not the last one in encoder output.
    precondition(flac[4] & 0x80 == 0)
    let header: [UInt8] = [6, UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)]
    return Array(flac[0..<42]) + header + body + Array(flac[42...])
}

/// Collects a library's events.
final class EventLog: Sendable {
    private let events = Mutex<[LibraryEvent]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ library: LocalLibrary) {
        let stream = library.events.subscribe()
        let t = Task { [weak self] in
            for await item in stream { self?.events.withLock { $0.append(item.event) } }
        }
        task.withLock { $0 = t }
    }

    var all: [LibraryEvent] { events.withLock { $0 } }

    deinit { task.withLock { $0?.cancel() } }
}

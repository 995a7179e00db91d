import Foundation
import RawPaths
import Logging
import Lyrics
import Synchronization
import TonearmCore

/// Standard MIDI Files: plays them through FluidSynth, browses the MIDI folder, and reopens at the last choice.
public final class MIDISource: SourcePlugin, BrowsableSource {
    public let name = "midi"
    /// The id of the browse root.
    public static let rootID = "midi"
    public let settings: MIDISettings
    let catalog = MIDICatalog()
    let renditions: RenditionCache
    let resumeStore: ResumeStore
    let logger: Logger
    private let context = Mutex<PluginContext?>(nil)
    /// Parsing thousands of files blocks; it runs here, never on the caller's executor.
    private let work = DispatchQueue(label: "tonearm.midi", qos: .userInitiated, attributes: .concurrent)

    /// - Parameters:
    ///   - resumeFile: where the last choice is kept (the daemon uses `$XDG_STATE_HOME/tonearm/midi.json`).
    ///   - renditionFolder: where rewritten files for GStreamer go (`$XDG_CACHE_HOME/tonearm/midi`).
    public init(settings: MIDISettings, resumeFile: URL, renditionFolder: URL, logger: Logger = Logger(label: "tonearm.midi")) {
        self.settings = settings
        self.resumeStore = ResumeStore(url: resumeFile)
        self.renditions = RenditionCache(folder: renditionFolder)
        self.logger = logger
    }

    /// What the engine must set on FluidSynth's GStreamer element.
    public var elementSettings: [String: [String: String]] {
        ["fluiddec": ["soundfont": settings.soundFont.path]]
    }

    public func start(_ context: PluginContext) async throws {
        self.context.withLock { $0 = context }
        do { try SoundFont.validate(settings.soundFont) } catch {
            logger.warning("MIDI files will not play: \(error.message)")
        }
    }

    // MARK: SourcePlugin

    /// By the path's bytes: Foundation's `URL.path` is empty for a name that is not UTF-8 (a Latin-1 `é`).
    public func canResolve(_ uri: URL) -> Bool {
        guard uri.isFileURL, let path = RawPath(fileURL: uri) else { return false }
        return MIDICatalog.isMIDI(path: path)
    }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        guard let path = RawPath(fileURL: uri) else { throw TonearmError.noSuchFile(uri.absoluteString) }
        var info = stat()
        guard path.withCString({ stat($0, &info) }) == 0 else { throw TonearmError.noSuchFile(path.string) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw TonearmError.notAFile(path.string) }
        guard path.withCString({ access($0, R_OK) }) == 0 else { throw TonearmError.notReadable(path.string) }
        try SoundFont.validate(settings.soundFont)
        let parsed = try await parsed(path)
        var metadata = Self.metadata(uri: uri.absoluteString, stem: path.stem, info: parsed.info)
        metadata.seeksDespiteQuery = true
        let fileInfo = info
        metadata.streamURL = try await onWorkQueue { [renditions] in
            do {
                return try renditions.url(for: path, info: fileInfo, file: parsed.file)?.absoluteString
            } catch {
                throw TonearmError(.renditionFailed, "cannot prepare \(path.string) for playback: \(error)")
            }
        }
        return metadata
    }

    public func verify(_ uri: URL) async throws {
        guard let path = RawPath(fileURL: uri) else { throw TonearmError.noSuchFile(uri.absoluteString) }
        _ = try await parsed(path)
    }

    public func trackStarted(_ metadata: TrackMetadata) async {
        guard let url = URL(string: metadata.url), url.isFileURL, let relative = relativePath(of: url) else { return }
        remember(relative)
    }

    // MARK: Lyrics

    /// The words of the MIDI file at `url`, timed as the listener hears them (the rendition keeps the tempo map's
    /// times); nil when it is not a MIDI file or has none.
    public func lyrics(for url: URL) async -> Lyrics? {
        guard canResolve(url), let path = RawPath(fileURL: url) else { return nil }
        return try? await onWorkQueue { [catalog] in
            guard case .success(let parsed)? = catalog.parse(path) else { return nil }
            return MIDILyrics.extract(parsed.file, karaoke: MIDICatalog.isKaraoke(path))
        }
    }

    // MARK: Browsing

    public var browseRoots: [BrowseRoot] { [BrowseRoot(id: Self.rootID, title: "MIDI files")] }

    public func list(root: String, path: String) async throws -> [BrowseEntry] {
        try checkRoot(root)
        let folder = try Browse.resolve(path, under: settings.folder)
        return try await onWorkQueue { [self] in
            var entries: [BrowseEntry] = []
            var files: [(name: String, path: RawPath)] = []
            for child in try Browse.diskEntries(of: folder) {
                if child.isFolder {
                    entries.append(.folder(child.name, path: folder.childPath(child.name)))
                } else if child.isRegularFile, MIDICatalog.isMIDI(path: child.path) {
                    files.append((child.name, child.path))
                }
            }
            let parsed = catalog.parseAll(files.map(\.path))
            for (file, result) in zip(files, parsed) {
                guard let outcome = result else { continue } // vanished meanwhile
                entries.append(Self.entry(name: file.name, relativePath: folder.childPath(file.name), path: file.path, outcome: outcome))
            }
            return Browse.sorted(entries)
        }
    }

    public func entry(root: String, path: String) async throws -> BrowseEntry {
        try checkRoot(root)
        let file = try resolveFile(path)
        return try await onWorkQueue { [self] in
            let path = RawPath(file.url.path)
            guard let outcome = catalog.parse(path) else { throw TonearmError.noSuchFile(file.relative) }
            return Self.entry(name: file.url.lastPathComponent, relativePath: file.relative, path: path, outcome: outcome)
        }
    }

    public func choose(root: String, path: String) async throws {
        try checkRoot(root)
        remember(try resolveFile(path).relative)
    }

    /// The last choice under the current root; when the file is gone, the nearest folder of its trail that still
    /// exists, with nothing selected.
    public func resume(root: String) async throws -> BrowsePlace {
        try checkRoot(root)
        let title = browseRoots[0].title
        guard let choice = resumeStore.load(), let parts = try? Browse.components(of: choice.path), !parts.isEmpty else {
            return .root(title: title)
        }
        let parent = parts.dropLast().joined(separator: "/")
        if let file = try? resolveFile(choice.path), file.relative == parts.joined(separator: "/") {
            return BrowsePlace(folder: parent, trail: Browse.trail(to: parent, rootTitle: title), selected: parts.last)
        }
        for count in stride(from: parts.count - 1, through: 1, by: -1) {
            let folder = parts.prefix(count).joined(separator: "/")
            if (try? Browse.resolve(folder, under: settings.folder)) != nil {
                return BrowsePlace(folder: folder, trail: Browse.trail(to: folder, rootTitle: title), selected: nil)
            }
        }
        return .root(title: title)
    }

    // MARK: Helpers

    private func checkRoot(_ root: String) throws {
        guard root == Self.rootID else { throw TonearmError.noSuchRoot(root, known: [Self.rootID]) }
    }

    /// A visible regular file under the root (no "..", no absolute path, no link leading outside).
    private func resolveFile(_ path: String) throws -> (url: URL, relative: String) {
        let parts = try Browse.components(of: path)
        guard let name = parts.last else { throw TonearmError.notAFile(path) }
        let folder = try Browse.resolve(parts.dropLast().joined(separator: "/"), under: settings.folder)
        let relative = folder.childPath(name)
        let url = folder.url.appendingPathComponent(name)
        guard let real = Browse.realPath(url) else { throw TonearmError.noSuchFile(relative) }
        guard Browse.isWithin(real, folder.realRoot) else {
            throw TonearmError.outsideRoot(relative, "it leads to \(real.path), outside the root \(folder.root.path)")
        }
        var info = stat()
        guard stat(real.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw TonearmError.notAFile(relative) }
        return (url, relative)
    }

    /// The path of a file under the root, relative to it, or nil when it is elsewhere.
    func relativePath(of url: URL) -> String? {
        guard let realRoot = Browse.realPath(settings.folder), let real = Browse.realPath(url),
              Browse.isWithin(real, realRoot) else { return nil }
        let parts = real.standardizedFileURL.pathComponents.dropFirst(realRoot.standardizedFileURL.pathComponents.count)
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    private func remember(_ relative: String) {
        do {
            try resumeStore.save(ResumeStore.Choice(path: relative, root: settings.folder.path))
        } catch {
            logger.error("cannot remember the last MIDI choice: \(error)")
        }
    }

    private func parsed(_ path: RawPath) async throws -> MIDICatalog.Parsed {
        try await onWorkQueue { [catalog] in
            guard let outcome = catalog.parse(path) else { throw TonearmError.noSuchFile(path.string) }
            switch outcome {
            case .success(let parsed): return parsed
            case .failure(let error):
                throw TonearmError(.invalidMIDIFile, "\(path.string): \(error.message)")
            }
        }
    }

    private func onWorkQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await work.run(body)
    }

    static func metadata(uri: String, stem: String, info: MIDIFileInfo) -> TrackMetadata {
        var metadata = TrackMetadata(url: uri, title: info.title ?? stem)
        metadata.length = Int64((info.duration * 1_000_000).rounded())
        metadata.genres = []
        return metadata
    }

    static func stem(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    static func entry(name: String, relativePath: String, path: RawPath, outcome: Result<MIDICatalog.Parsed, SMFError>) -> BrowseEntry {
        switch outcome {
        case .failure(let error):
            return BrowseEntry(name: name, path: relativePath, isFolder: false, title: stem(name), extra: ["error": .string(error.message)])
        case .success(let parsed):
            let info = parsed.info
            var extra: [String: BrowseValue] = [
                "format": .int(info.format),
                "tracks": .int(info.trackCount),
                "channels": .int(info.channelCount),
                "instruments": .strings(info.instruments),
                "lyrics": .bool(info.hasLyrics),
            ]
            if let copyright = info.copyright { extra["copyright"] = .string(copyright) }
            if let time = info.timeSignature { extra["timeSignature"] = .string(time) }
            if let key = info.keySignature { extra["keySignature"] = .string(key) }
            if let bpm = info.initialBPM { extra["tempo"] = .double((bpm * 100).rounded() / 100) }
            // Foundation's encoding, as before, where it can name the file; the path's bytes where it cannot.
            let uri = path.isValidUTF8 ? URL(fileURLWithPath: path.string).absoluteString : path.uri
            return BrowseEntry(name: name, path: relativePath, isFolder: false, uri: uri,
                               title: info.title ?? stem(name), duration: info.duration, extra: extra)
        }
    }
}

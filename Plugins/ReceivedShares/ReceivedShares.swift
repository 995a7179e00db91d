import Foundation
import Logging
import Synchronization
import TonearmCore

/// Files that arrive from other devices: inbox folders watched for complete files, accepted by content into the
/// library's `Received` folder (rejects into `Rejected` with the reason), announced and queued; and exports of
/// tracks to a folder, to send them on.
public final class ReceivedShares: SourcePlugin {
    public let name = "shares"
    public let settings: SharesSettings
    /// Every import and export, in order; consume it from one task.
    /// Every import and export, in order, to each subscriber through a bounded buffer of its own.
    public let events = EventFanOut<ShareEvent>()
    let artCache: ArtCache
    /// Probe, decode check, typefind and export, as the daemon provides them.
    let media: any MediaOperations
    let logger: Logger
    /// Makes a received file part of the library index at once.
    let indexer: (@Sendable (URL) async -> Void)?
    private let context = Mutex<PluginContext?>(nil)
    private let watcher = Mutex<InboxWatcher?>(nil)
    /// Imports run one at a time, in arrival order, off the caller's executor.
    private let importQueue = DispatchQueue(label: "tonearm.shares.import", qos: .utility)
    let exportQueue = DispatchQueue(label: "tonearm.shares.export", qos: .utility, attributes: .concurrent)
    let exports = Mutex<[String: ExportCancellation]>([:])
    /// Paths already handled in this run (copy mode leaves them in the inbox).
    private let handled = Mutex<Set<String>>([])
    /// Receivers that ask before they take files.
    private let offerSources = Mutex<[any ShareOfferSource]>([])

    /// `media`: the operations that check received files by content and write exports.
    public init(settings: SharesSettings, artCache: ArtCache, media: any MediaOperations, logger: Logger = Logger(label: "tonearm.shares"),
                indexer: (@Sendable (URL) async -> Void)? = nil) {
        self.settings = settings
        self.artCache = artCache
        self.media = media
        self.logger = logger
        self.indexer = indexer
    }

    deinit {
        watcher.withLock { $0?.stop() }
        events.finish()
    }

    // MARK: SourcePlugin

    /// Received files are played from the library; this plugin resolves nothing itself.
    public func canResolve(_ uri: URL) -> Bool { false }

    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        throw TonearmError.unsupportedScheme(uri.absoluteString)
    }

    /// Creates the folders, takes what arrived while the daemon was down, and watches the inboxes.
    public func start(_ context: PluginContext) async throws {
        self.context.withLock { $0 = context }
        // Received and Rejected are made when the first file goes there.
        for folder in settings.inboxes {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let settle = settings.settle, logger = logger
        let new = try InboxWatcher(inboxes: settings.inboxes.map(\.path), settle: settle, noticed: { path in
            logger.info("\(path) arrived; it is taken once it has not changed for \(settle) or its sender says it is complete")
        }) { [weak self] path in
            self?.arrived(path)
        }
        watcher.withLock { $0 = new }
        new.start()
    }

    public func stop() async {
        watcher.withLock { $0?.stop() }
    }

    /// A sender (KDE Connect, BlueZ obexd) says the transfer of `path` is complete: it is taken without waiting
    /// for it to settle, if it is in an inbox.
    public func senderFinished(_ path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        guard settings.inboxes.contains(where: { $0.path == folder }) else { return }
        watcher.withLock { $0?.complete(path) }
    }

    // MARK: Importing

    private func arrived(_ path: String) {
        guard handled.withLock({ $0.insert(path).inserted }) else { return }
        importQueue.async { [self] in
            let outcome = importNow(path)
            if settings.keep == .move { handled.withLock { _ = $0.remove(path) } }
            Task { await announce(outcome) }
        }
    }

    enum Outcome: Sendable {
        case received(URL, TrackMetadata, duplicate: Bool)
        case rejected(String, String)
        case failed(String, String)
    }

    // MARK: Network receivers

    /// Takes a file a device sent (complete, in the receiver's staging folder) through the same acceptance as the
    /// inbox: checked by content, stored under `name` in Received without replacing anything (or set aside in
    /// Rejected with the reason), announced, and handed to the on-receive action. The staged file is always moved.
    /// Returns where the file is in the library, or nil when it was refused.
    @discardableResult
    public func take(staged path: String, name: String, from sender: ShareSender) async -> URL? {
        let outcome: Outcome = await withCheckedContinuation { done in
            importQueue.async { [self] in done.resume(returning: importNow(path, name: name, move: true)) }
        }
        var stored: URL?
        switch outcome {
        case .received(let url, _, _):
            stored = url
            events.publish(.fromDevice(sender: sender, fileName: name, uri: url.absoluteString, reason: nil))
        case .rejected(_, let reason), .failed(_, let reason): events.publish(.fromDevice(sender: sender, fileName: name, uri: nil, reason: reason))
        }
        await announce(outcome)
        return stored
    }

    /// A device offered a file the library holds already at `path` (it was not sent again).
    public func alreadyStored(_ fileName: String, from sender: ShareSender, at path: String) {
        events.publish(.fromDevice(sender: sender, fileName: fileName, uri: URL(fileURLWithPath: path).absoluteString, reason: nil))
    }

    /// A device's file refused before it was received (not audio by name, over a limit, a wrong checksum…).
    public func refusedFromDevice(_ fileName: String, from sender: ShareSender, reason: String) {
        events.publish(.fromDevice(sender: sender, fileName: fileName, uri: nil, reason: reason))
    }

    /// Adds a receiver whose offers `PendingOffers` lists and `AnswerOffer` answers.
    public func addOfferSource(_ source: any ShareOfferSource) {
        offerSources.withLock { $0.append(source) }
    }

    /// Offers waiting for the user, from every receiver.
    public func pendingOffers() async -> [ShareOffer] {
        var all: [ShareOffer] = []
        for source in offerSources.withLock({ $0 }) { all += await source.pendingOffers() }
        return all
    }

    /// Accepts or declines an offer; false when no receiver has one with that id.
    public func answerOffer(_ id: String, accept: Bool) async -> Bool {
        for source in offerSources.withLock({ $0 }) where await source.answerOffer(id, accept: accept) { return true }
        return false
    }

    /// Passes a receiver's offer news to the bus.
    public func offerEvent(_ event: ShareEvent) { events.publish(event) }

    /// Checks the file by content and puts it where it belongs. Runs on the import queue.
    func importNow(_ path: String, name: String? = nil, move: Bool? = nil) -> Outcome {
        let name = Self.safeName(name ?? (path as NSString).lastPathComponent)
        let move = move ?? (settings.keep == .move)
        let accepted: ProbedMedia
        do {
            accepted = try Self.accept(path, media: media)
        } catch {
            return reject(path, name: name, reason: error.message, move: move)
        }
        if let existing = duplicate(of: path) {
            if move { unlink(path) } // the same bytes are already in Received: nothing is lost
            logger.info("\(path) is already in the library as \(existing)")
            return .received(URL(fileURLWithPath: existing), metadata(existing, accepted), duplicate: true)
        }
        do {
            let stored = try FileTransfer.transfer(path, into: settings.received.path, name: name, move: move)
            logger.info("received \(path) as \(stored)")
            return .received(URL(fileURLWithPath: stored), metadata(stored, accepted), duplicate: false)
        } catch {
            logger.error("cannot store \(path): \(error)")
            return .failed(path, "\(error)")
        }
    }

    private func reject(_ path: String, name: String, reason: String, move: Bool) -> Outcome {
        let folder = settings.rejected.path
        if !move, Self.alreadyNoted(path, in: folder, name: name) { return .rejected(path, reason) }
        do {
            let kept = move ? try FileTransfer.transfer(path, into: folder, name: name, move: true) : path
            let note = "Tonearm did not add this file to the library.\nFile: \(path)\nReason: \(reason)\nDate: \(Date())\n"
            _ = try FileTransfer.writeNote(note, into: folder, name: (kept as NSString).lastPathComponent + ".reason.txt")
            logger.warning("rejected \(path): \(reason)")
            return .rejected(kept, reason)
        } catch {
            logger.error("cannot set \(path) aside: \(error) (it was rejected: \(reason))")
            return .rejected(path, reason)
        }
    }

    /// In copy mode a rejected file stays in the inbox; its note from an earlier run is not written again.
    static func alreadyNoted(_ path: String, in folder: String, name: String) -> Bool {
        FileTransfer.candidates(name + ".reason.txt", in: folder).prefix(100).prefix { FileManager.default.fileExists(atPath: $0) }
            .contains { (try? String(contentsOfFile: $0, encoding: .utf8))?.contains("File: \(path)\n") == true }
    }

    /// A file in Received with the same bytes.
    private func duplicate(of path: String) -> String? {
        guard let size = InboxWatcher.regularFile(path)?.size else { return nil }
        let folder = settings.received.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names where !name.hasPrefix(".") {
            let other = folder + "/" + name
            if InboxWatcher.regularFile(other)?.size == size, FileTransfer.sameBytes(path, other) { return other }
        }
        return nil
    }

    private func metadata(_ path: String, _ probed: ProbedMedia) -> TrackMetadata {
        let url = URL(fileURLWithPath: path)
        var metadata = TrackMetadata(url: url.absoluteString, title: url.deletingPathExtension().lastPathComponent)
            .merging(probed.tags, artCache: artCache)
        if let ns = probed.duration, ns > 0 { metadata.length = ns / 1000 }
        return metadata
    }

    /// Playable audio or MIDI, by content: the discoverer must find an audio stream and the whole file must decode
    /// (a truncated file stops short of its announced length).
    static func accept(_ path: String, media: any MediaOperations) throws(MediaError) -> ProbedMedia {
        let uri = URL(fileURLWithPath: path).absoluteString
        if let reason = Truncation.reason(path) {
            throw MediaError(domain: "stream", code: 7, message: reason, debug: uri)
        }
        let probed = try media.probe(uri: uri, timeout: .seconds(30))
        let decoded = try media.decodedLength(uri: uri, timeout: .seconds(120))
        // A quarter second (or 2 %) of slack for containers whose length is an estimate.
        if let announced = probed.duration, decoded + max(250_000_000, announced / 50) < announced {
            throw MediaError(domain: "stream", code: 7, message: String(
                format: "truncated: it decodes to %.1f s of the %.1f s it announces", Double(decoded) / 1e9, Double(announced) / 1e9),
                debug: uri)
        }
        return probed
    }

    /// The name a received file is stored under: control characters and invalid UTF-8 replaced, at most 200 bytes
    /// (keeping the extension), never empty or hidden.
    static func safeName(_ name: String) -> String {
        var clean = String(name.unicodeScalars.map { $0.properties.generalCategory == .control ? "_" : Character($0) })
        if clean.hasPrefix(".") { clean = "_" + clean.dropFirst() }
        if clean.isEmpty { clean = "received" }
        let ext = (clean as NSString).pathExtension
        while clean.utf8.count > 200 {
            let stem = (clean as NSString).deletingPathExtension
            clean = String(stem.dropLast(max(1, (clean.utf8.count - 200) / 4))) + (ext.isEmpty ? "" : "." + ext)
        }
        return clean
    }

    // MARK: Announcing

    private func announce(_ outcome: Outcome) async {
        switch outcome {
        case .received(let url, let metadata, _):
            await indexer?(url)
            events.publish(.received(uri: url.absoluteString, metadata: metadata))
            guard let context = context.withLock({ $0 }) else { return }
            do {
                switch settings.onReceive {
                case .queue: _ = try await context.enqueue([url.absoluteString], at: .end)
                case .queueNext: _ = try await context.enqueue([url.absoluteString], at: .afterCurrent)
                case .play: _ = try await context.open([url.absoluteString])
                case .add: break
                }
            } catch {
                logger.error("cannot queue \(url.path): \(error)")
            }
        case .rejected(let path, let reason):
            events.publish(.rejected(path: path, reason: reason))
        case .failed(let path, let reason):
            events.publish(.rejected(path: path, reason: reason))
        }
    }

    func emit(_ event: ShareEvent) { events.publish(event) }
}

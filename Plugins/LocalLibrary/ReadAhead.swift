import Dispatch
import Foundation
import Synchronization
import TonearmCore

/// One file's tags as a scan writes them: embedded cover art is already in the art cache, so only its URL is held.
struct ReadResult: Sendable {
    var outcome: TagReader.Outcome
    /// The art cache URL of the embedded picture; nil when there is none or it could not be stored.
    var embeddedArt: String?
}

/// Reads files' tags on threads of its own, ahead of the one consumer (the scan, which writes them to the index)
/// and handed over in the files' order. Reading overlaps writing this way, and at most `window` results wait.
///
/// The threads are its own, not a dispatch queue's: they live for the whole scan, and on the library's read queue
/// they would keep on-demand reads (a track being enqueued) waiting until the scan ends.
final class ReadAhead: Sendable {
    private let files: [FoundFile]
    private let artCache: ArtCache
    /// A ring of `window` places: file `i`'s result waits in place `i % window` (no more are read ahead).
    private let slots: Mutex<[ReadResult?]>
    private let window: Int
    private let next = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// One signal per result stored.
    private let ready = DispatchSemaphore(value: 0)
    /// One signal per free place in the window. Starts at zero and is signalled up, because a semaphore released
    /// below its initial value traps.
    private let room = DispatchSemaphore(value: 0)
    private let workers: Int

    init(files: [FoundFile], workers: Int, window: Int, artCache: ArtCache) {
        self.files = files
        self.artCache = artCache
        self.window = max(1, min(window, files.count))
        slots = Mutex(Array(repeating: nil, count: self.window))
        self.workers = max(1, min(workers, files.count))
        for _ in 0..<self.window { room.signal() }
        guard !files.isEmpty else { return }
        for i in 0..<self.workers {
            let thread = Thread { [self] in work() }
            thread.name = "tonearm.library.read-\(i)"
            thread.start()
        }
    }

    private func work() {
        while true {
            room.wait()
            let i = next.add(1, ordering: .relaxed).oldValue
            guard i < files.count, !stopped.load(ordering: .relaxed) else {
                room.signal()
                return
            }
            let result = read(files[i])
            slots.withLock { $0[i % window] = result }
            ready.signal()
        }
    }

    private func read(_ file: FoundFile) -> ReadResult {
        let outcome = TagReader.read(file.path, size: file.size)
        // Stored here, on the reading threads, so that the bytes (up to megabytes) need not wait in the window.
        guard case .tags(var tags) = outcome, let picture = tags.picture else { return ReadResult(outcome: outcome) }
        tags.picture = nil
        return ReadResult(outcome: .tags(tags), embeddedArt: (try? artCache.store(picture))?.absoluteString)
    }

    /// The result for `files[index]`, waiting for it when needed. Call for 0, 1, 2, … in turn, from one thread.
    func result(_ index: Int) -> ReadResult {
        while true {
            let taken = slots.withLock { slots -> ReadResult? in
                defer { slots[index % window] = nil }
                return slots[index % window]
            }
            if let taken {
                room.signal()
                return taken
            }
            // Each signal stands for a result stored; one for a later index only means that one need not be
            // waited for. This index's own signal is still to come, so the wait ends.
            ready.wait()
        }
    }

    /// Lets the threads finish without reading further (when the consumer gives up early).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        for _ in 0..<workers { room.signal() }
    }
}

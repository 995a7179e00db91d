import Foundation
import RawPaths
import Glibc
import Synchronization
import TonearmCore

/// inotify watches on folders, read on a thread of its own. Changes are gathered until half a second passes with
/// none, then handed over as the set of folders they touched (or `overflow` when the kernel dropped events).
final class Watcher: Sendable {
    typealias Handler = @Sendable (_ folders: Set<RawPath>, _ overflow: Bool) -> Void

    static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
    static let debounce: Duration = .milliseconds(500)

    private let channel: InotifyChannel
    private var fd: Int32 { channel.fd }
    private let watches = Mutex<[Int32: RawPath]>([:])
    private let stopped = Atomic<Bool>(false)
    private let handler: Handler

    init(_ handler: @escaping Handler) throws {
        channel = try InotifyChannel()
        self.handler = handler
    }

    /// Watches `folders` (again: a folder already watched keeps its watch).
    func add(_ folders: [RawPath]) {
        guard !stopped.load(ordering: .acquiring) else { return }
        var added: [(Int32, RawPath)] = []
        for folder in folders {
            let wd = folder.withCString { inotify_add_watch(fd, $0, Self.mask) }
            if wd >= 0 { added.append((wd, folder)) }
        }
        watches.withLock { for (wd, folder) in added { $0[wd] = folder } }
    }

    var watchCount: Int { watches.withLock { $0.count } }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "tonearm.library.watch"
        thread.start()
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        channel.wake()
    }

    private func run() {
        defer { channel.close() }
        var pending = Set<RawPath>()
        var overflow = false
        var deadline: ContinuousClock.Instant?
        while !stopped.load(ordering: .acquiring) {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                timeout = max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: channel.wakeRead, events: Int16(POLLIN), revents: 0)]
            let r = poll(&fds, 2, timeout)
            if r < 0 && errno != EINTR { break }
            if stopped.load(ordering: .acquiring) { break }
            if fds[0].revents & Int16(POLLIN) != 0 {
                if parse(channel.readEvents(), into: &pending, overflow: &overflow) {
                    deadline = ContinuousClock.now + Self.debounce
                }
            }
            if let due = deadline, ContinuousClock.now >= due {
                deadline = nil
                let folders = pending
                let dropped = overflow
                pending = []
                overflow = false
                if !folders.isEmpty || dropped { handler(folders, dropped) }
            }
        }
    }

    /// Adds the folders that inotify events touched; returns whether any event mattered.
    private func parse(_ events: [InotifyEvent], into pending: inout Set<RawPath>, overflow: inout Bool) -> Bool {
        var relevant = false
        for event in events {
            let (wd, mask, nameBytes) = (event.watch, event.mask, event.name)
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                overflow = true
                relevant = true
                continue
            }
            if mask & UInt32(IN_IGNORED) != 0 {
                watches.withLock { _ = $0.removeValue(forKey: wd) }
                continue
            }
            guard let folder = watches.withLock({ $0[wd] }) else { continue }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                if mask & UInt32(IN_MOVE_SELF) != 0 {
                    inotify_rm_watch(fd, wd)
                    watches.withLock { _ = $0.removeValue(forKey: wd) }
                }
                pending.insert(folder.parent)
                relevant = true
                continue
            }
            if nameBytes.first == UInt8(ascii: ".") { continue }  // hidden entries, temporary files
            // A new file is read once written (IN_CLOSE_WRITE); a new folder is walked at once.
            if mask & UInt32(IN_CREATE) != 0 && mask & UInt32(IN_ISDIR) == 0 { continue }
            pending.insert(folder)
            relevant = true
        }
        return relevant
    }
}

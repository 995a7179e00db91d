import Foundation
import Glibc
import Synchronization
import TonearmCore

/// Decides when a file in an inbox is complete, on a thread of its own: it must have been closed after writing
/// (or renamed in, or been there at start, or a sender said so), keep its size and time for `settle`, not carry a
/// partial-download name, and not be open for writing by anyone (a read lease is refused while it is).
final class InboxWatcher: Sendable {
    typealias Ready = @Sendable (_ path: String) -> Void

    static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF)
    /// F_SETLEASE and its lock types (Linux; not imported into Swift).
    private static let setLease: Int32 = 1024
    private static let readLease: Int32 = 0
    private static let noLease: Int32 = 2

    private struct Candidate {
        var size: Int64
        var mtime: Int64
        /// Closed after writing (or renamed in, or found at start) since it last changed.
        var closed: Bool
        /// A sender announced the transfer complete: no settling needed.
        var announced: Bool
        var stableSince: ContinuousClock.Instant
    }

    private let inboxes: [String]
    private let settle: Duration
    private let ready: Ready
    /// Told when a file is first seen closed after writing and starts to settle.
    private let noticed: Ready
    private let channel: InotifyChannel
    private var fd: Int32 { channel.fd }
    private let stopped = Atomic<Bool>(false)
    /// Paths handed in from other threads (sender announcements), picked up by the watcher thread.
    private let announcements = Mutex<[String]>([])

    init(inboxes: [String], settle: Duration, noticed: @escaping Ready = { _ in }, ready: @escaping Ready) throws {
        channel = try InotifyChannel()
        self.inboxes = inboxes
        self.settle = settle
        self.noticed = noticed
        self.ready = ready
    }

    /// Watches the inboxes and takes what is already in them (it arrived while the daemon was down). The watches are
    /// in place when this returns, so a file that arrives afterwards is never mistaken for one found at start.
    func start() {
        var folders: [Int32: String] = [:]
        var candidates: [String: Candidate] = [:]
        for inbox in inboxes {
            let wd = inotify_add_watch(fd, inbox, Self.mask | UInt32(IN_ONLYDIR))
            if wd >= 0 { folders[wd] = inbox }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: inbox)) ?? [] {
                let path = inbox + "/" + name
                if let info = Self.regularFile(path) {
                    candidates[path] = Candidate(size: info.size, mtime: info.mtime, closed: true, announced: false,
                                                 stableSince: .now - settle)
                }
            }
        }
        let thread = Thread { [self, folders, candidates] in run(folders: folders, candidates: candidates) }
        thread.name = "tonearm.shares.inbox"
        thread.start()
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake()
    }

    /// A sender said the file at `path` is complete (KDE Connect, BlueZ obexd).
    func complete(_ path: String) {
        announcements.withLock { $0.append(path) }
        wake()
    }

    private func wake() { channel.wake() }

    private func run(folders: [Int32: String], candidates: [String: Candidate]) {
        defer { channel.close() }
        var folders = folders
        var candidates = candidates
        while !stopped.load(ordering: .acquiring) {
            check(&candidates)
            var timeout: Int32 = -1
            if let next = candidates.values.filter(\.closed).map({ $0.stableSince + ($0.announced ? .zero : settle) }).min() {
                let left = next - .now
                timeout = max(10, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: channel.wakeRead, events: Int16(POLLIN), revents: 0)]
            let r = poll(&fds, 2, timeout)
            if r < 0 && errno != EINTR { break }
            if stopped.load(ordering: .acquiring) { break }
            if fds[1].revents & Int16(POLLIN) != 0 {
                channel.drainWakes()
                for path in announcements.withLock({ list in defer { list = [] }; return list }) {
                    guard let info = Self.regularFile(path) else { continue }
                    candidates[path] = Candidate(size: info.size, mtime: info.mtime, closed: true, announced: true, stableSince: .now)
                }
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                apply(channel.readEvents(), folders: &folders, candidates: &candidates)
            }
        }
    }

    /// Updates candidates from inotify events.
    private func apply(_ events: [InotifyEvent], folders: inout [Int32: String], candidates: inout [String: Candidate]) {
        for event in events {
            guard let folder = folders[event.watch], !event.name.isEmpty, !event.has(IN_ISDIR) else { continue }
            let path = folder + "/" + String(decoding: event.name, as: UTF8.self)
            if event.has(IN_CLOSE_WRITE | IN_MOVED_TO) {
                guard let info = Self.regularFile(path) else { continue }
                if candidates[path]?.closed != true { noticed(path) }
                candidates[path] = Candidate(size: info.size, mtime: info.mtime, closed: true,
                                             announced: candidates[path]?.announced ?? false, stableSince: .now)
            } else if event.has(IN_CREATE | IN_MODIFY) {
                // Being written: wait for the writer to close it.
                candidates[path] = Candidate(size: -1, mtime: 0, closed: false, announced: false, stableSince: .now)
            }
        }
    }

    /// Hands over every candidate that is complete; forgets vanished ones.
    private func check(_ candidates: inout [String: Candidate]) {
        let now = ContinuousClock.now
        for (path, candidate) in candidates where candidate.closed {
            guard let info = Self.regularFile(path) else {
                candidates[path] = nil
                continue
            }
            if info.size != candidate.size || info.mtime != candidate.mtime {
                candidates[path]?.size = info.size
                candidates[path]?.mtime = info.mtime
                candidates[path]?.stableSince = now
                continue
            }
            let name = (path as NSString).lastPathComponent
            guard !PartialNames.isPartial(name) else {
                candidates[path] = nil // its final name will come with IN_MOVED_TO
                continue
            }
            guard now - candidate.stableSince >= (candidate.announced ? .zero : settle) else { continue }
            if Self.openForWriting(path) {
                candidates[path]?.stableSince = now
                continue
            }
            candidates[path] = nil
            ready(path)
        }
    }

    /// Size and modification time (ns) of a regular file (not a link, FIFO or folder).
    static func regularFile(_ path: String) -> (size: Int64, mtime: Int64)? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// Whether some process has the file open for writing: the kernel refuses a read lease then. Where leases do
    /// not work (another owner, some file systems) this says no and the settle time decides.
    static func openForWriting(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if fcntl(fd, setLease, readLease) == 0 {
            _ = fcntl(fd, setLease, noLease)
            return false
        }
        return errno == EAGAIN
    }
}

import Foundation
import Glibc

/// An inotify descriptor and a wake-up pipe, both non-blocking: what a watcher thread polls, so another thread
/// can wake it (to stop, or to hand it work) without a timeout.
public struct InotifyChannel: Sendable {
    /// The inotify descriptor.
    public let fd: Int32
    /// The read end of the wake-up pipe; poll it beside `fd`.
    public let wakeRead: Int32
    let wakeWrite: Int32

    /// Throws when no inotify descriptor can be had. Out of them (EMFILE: the user's 128 inotify instances, shared by
    /// every process of the user, or the process's descriptors), it tries again for up to `patience`: they come back
    /// as other programs end, and a library that cannot watch must not fail to start for a moment's shortage.
    public init(patience: Duration = .seconds(5)) throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        var fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        while fd < 0, errno == EMFILE, clock.now < deadline {
            usleep(100_000)
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        }
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE)
        }
        for p in pipeFDs {
            _ = fcntl(p, F_SETFD, FD_CLOEXEC)
            _ = fcntl(p, F_SETFL, O_NONBLOCK)
        }
        self.fd = fd
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
    }

    /// Wakes the thread polling `wakeRead`.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Empties the wake-up pipe (after a wake).
    public func drainWakes() {
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &drain, 64) > 0 {}
    }

    /// Everything `fd` has to read now, decoded (after poll said it is readable; it never blocks).
    public func readEvents() -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return events }
            var o = 0
            while o + 16 <= n {
                let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: o, as: Int32.self), raw.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: o + 12, as: UInt32.self)))
                }
                let name = Array(buffer[(o + 16)..<min(n, o + 16 + length)].prefix { $0 != 0 })
                events.append(InotifyEvent(watch: wd, mask: mask, name: name))
                o += 16 + length
            }
        }
    }

    /// Closes all three descriptors; the watcher thread calls it when it ends.
    public func close() {
        Glibc.close(fd)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }
}

/// One inotify event: the watch it belongs to, what happened, and the entry's name (bytes without the NUL
/// padding; empty when the event is about the watched folder itself).
public struct InotifyEvent: Sendable {
    public let watch: Int32
    public let mask: UInt32
    public let name: [UInt8]

    /// True when `mask` has any of `flags` (IN_CREATE, IN_ISDIR…).
    public func has(_ flags: Int32) -> Bool { mask & UInt32(flags) != 0 }
}

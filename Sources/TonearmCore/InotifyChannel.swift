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

    public init() throws {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
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

    /// Closes all three descriptors; the watcher thread calls it when it ends.
    public func close() {
        Glibc.close(fd)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }
}

import CLinux
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Opens what a Snapcast output writes into (the FIFO of a `pipe://` source, the port of a `tcp://` one) without ever
/// waiting long: GStreamer's own `filesink` blocks forever on a FIFO nobody reads and creates a regular file where the
/// FIFO is missing, so Tonearm opens the descriptor itself and hands it to `fdsink`.
///
/// Descriptors are non-blocking: `fdsink` polls before it writes, so the reader's pace (back-pressure) still paces
/// playback, and a state change can always interrupt a write that waits.
public enum OutputConnection {
    /// The `PlaybackError` domain of an output that cannot be opened now (as opposed to one described wrongly).
    public static let domain = "output"

    /// What went wrong opening an output; the message says what to do.
    public static func failure(_ message: String) -> PlaybackError {
        PlaybackError(domain: domain, code: 1, message: message)
    }

    /// Opens snapserver's FIFO for writing: it must exist, be a FIFO, and get a reader within `timeout`.
    ///
    /// While no writer is connected, snapserver does not keep its end open: it opens the FIFO, reads end-of-file and
    /// closes it again, every 100 ms. A non-blocking open almost never meets it, so the open waits (blocking, on a
    /// thread of its own) for the reader's next turn; a writer waiting in open() already counts as one, so
    /// snapserver's read then finds it and stays. After `timeout` the waiting open is released by opening the read
    /// end for a moment ourselves, and nothing is left waiting.
    public static func openFIFO(_ path: String, timeout: Duration = .milliseconds(800)) throws -> Int32 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = errno == ENOENT ? "does not exist" : String(cString: strerror(errno))
            throw failure("the Snapcast FIFO \(path) \(reason): snapserver makes it when it starts with source = pipe://\(path)?name=…")
        }
        guard info.st_mode & S_IFMT == S_IFIFO else {
            throw failure("\(path) is not a FIFO: a Snapcast pipe output writes only into snapserver's FIFO (remove the file and restart snapserver)")
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var fd: Int32
        while true {
            fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd < 0 {
                guard errno == ENXIO else {
                    throw failure("cannot open the Snapcast FIFO \(path): \(String(cString: strerror(errno)))")
                }
                fd = try waitForReader(path, timeout: max(.zero, deadline - .now))
            }
            // A reader met for a moment (snapserver's idle check reading end-of-file, another writer releasing its own
            // wait) may be gone already: one that stays is still there a moment later (poll says POLLERR when none is).
            usleep(50_000)
            var check = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&check, 1, 0)
            if check.revents & Int16(POLLERR) == 0 { break }
            close(fd)
            guard ContinuousClock.now < deadline else {
                throw failure("nothing reads the Snapcast FIFO \(path) (no reader stayed within \(timeout)): is snapserver running with source = pipe://\(path)?name=…?")
            }
        }
        // Checked again on what was opened (the path could have been swapped in between); non-blocking for fdsink.
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            close(fd)
            throw failure("\(path) is not a FIFO")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private static func waitForReader(_ path: String, timeout: Duration) throws -> Int32 {
        struct Waiting {
            var fd: Int32?
            var error: Int32 = 0
            var abandoned = false
        }
        let waiting = Mutex(Waiting())
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = tn_name_this_thread("tonearm-fifo-open")
            var fd: Int32
            repeat { fd = open(path, O_WRONLY | O_CLOEXEC) } while fd < 0 && errno == EINTR
            let error = errno
            let kept = waiting.withLock { w -> Bool in
                guard !w.abandoned else { return false }
                w.fd = fd
                w.error = error
                return true
            }
            if !kept, fd >= 0 { close(fd) }
            done.signal()
        }
        thread.start()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        if done.wait(timeout: .now() + seconds) == .timedOut {
            let opened = waiting.withLock { w -> Int32? in
                if w.fd == nil { w.abandoned = true }
                return w.fd
            }
            if opened == nil {
                // Be the reader for a moment: the waiting open returns, and the thread closes what it opened.
                let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                done.wait()
                if reader >= 0 { close(reader) }
                throw failure("nothing reads the Snapcast FIFO \(path) (no reader within \(timeout)): is snapserver running with source = pipe://\(path)?name=…?")
            }
            done.wait()
        }
        let (fd, error) = waiting.withLock { ($0.fd ?? -1, $0.error) }
        guard fd >= 0 else {
            throw failure("cannot open the Snapcast FIFO \(path): \(String(cString: strerror(error)))")
        }
        return fd
    }

    /// Connects to snapserver's TCP source within `timeout`.
    public static func connect(host: String, port: Int, timeout: Duration = .seconds(1)) throws -> Int32 {
        guard (1...65535).contains(port) else { throw failure("\(port) is not a TCP port") }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            throw failure("cannot resolve the Snapcast server \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = String(cString: strerror(errno)); continue }
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                close(fd)
                continue
            }
            let left = deadline - .now
            let milliseconds = max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            guard ready > 0 else {
                lastError = "no answer within \(timeout)"
                close(fd)
                continue
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return fd }
            lastError = String(cString: strerror(error))
            close(fd)
        }
        throw failure("cannot reach the Snapcast server at \(host):\(port) (\(lastError)): is snapserver running with source = tcp://\(host):\(port)?mode=server&name=…?")
    }
}

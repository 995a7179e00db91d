import Foundation
import Glibc

/// A raw TCP socket on 127.0.0.1, for what no well-behaved client does (a header never finished, a client that
/// never reads, a port held by "another program") and for asking whether a port is free.
public final class LoopbackSocket: Sendable {
    public let fd: Int32

    /// A socket; `receiveBuffer` shrinks the kernel's receive buffer (set before connecting, so the window is small).
    public init(receiveBuffer: Int32? = nil) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Connects to `port`; false when refused.
    public func connect(port: Int) -> Bool {
        var address = Self.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether `port` can be bound now, as servers bind it (SO_REUSEADDR).
    public func bind(port: Int) -> Bool {
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Binds a free port (and listens when asked); returns the port.
    public func bindFreePort(listening: Bool = false) -> Int {
        var address = Self.address(port: 0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if listening { listen(fd, 4) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @discardableResult
    public func send(_ text: String) -> Int { text.withCString { Glibc.send(fd, $0, strlen($0), 0) } }

    /// Waits (at most `seconds`) for a byte or the end: 0 when the other side closed, -1 on timeout, 1 for a byte.
    public func awaitEnd(seconds: Int) -> Int {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0)
    }

    /// Everything received until the other side closes, or until `seconds` pass with nothing new (blocking; the async
    /// `received(seconds:)` waits on a thread of its own).
    public func receiveUntilClosed(seconds: Int) -> [UInt8] {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return all }
            all += chunk[0..<n]
        }
    }

    /// `receiveUntilClosed` on a thread of its own, so the test process's few concurrency threads stay free.
    public func received(seconds: Int) async -> [UInt8] {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.receiveUntilClosed(seconds: seconds)) }
        }
    }

    public func close() { Glibc.close(fd) }

    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

import Foundation
import TonearmCore

/// A small HTTP/1.x client for plain `http` over a socket: Icecast and SHOUTcast answer with headers that Foundation's
/// URLSession refuses ("icy-name:Station" with no space, `ICY 200 OK`), so stream URLs are asked here. Blocking: run
/// it off the cooperative pool (`StreamsSource.requests`). Every step is bounded by the time-out.
enum PlainHTTP {
    /// The most redirects followed before the server counts as redirecting in a loop.
    static let maximumRedirects = 8
    /// The most header bytes read.
    static let maximumHeaderBytes = 64 * 1024

    /// What a GET found, or where it is redirected.
    enum Outcome {
        case answer(HTTPAnswer)
        case redirect(URL)
    }

    /// GETs `url` following redirects (to http; an https target is returned as `.redirect` for the TLS client).
    static func get(_ url: URL, bodyLimit: Int, timeout: Double, userAgent: String) throws -> Outcome {
        var current = url
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        for _ in 0...maximumRedirects {
            switch try once(current, bodyLimit: bodyLimit, deadline: deadline, userAgent: userAgent) {
            case .answer(let answer): return .answer(answer)
            case .redirect(let target):
                guard target.scheme?.lowercased() == "http" else { return .redirect(target) }
                current = target
            }
        }
        throw TonearmError(.tooManyRedirects, "\(url.absoluteString): the server redirects in a loop (more than \(maximumRedirects) redirects)")
    }

    /// An answer whose headers are read: the socket (the caller closes it), the status, the headers by lower-case
    /// name, and the body bytes that came with them.
    private struct Opened {
        var socket: Int32
        var status: Int
        var headers: [String: String]
        var rest: [UInt8]
    }

    /// Connects, sends the GET (asking for ICY metadata) and reads the answer's headers.
    private static func open(_ url: URL, deadline: ContinuousClock.Instant, userAgent: String) throws -> Opened {
        guard let host = url.host, !host.isEmpty else { throw TonearmError(.invalidUri, "no host in \(url.absoluteString)") }
        let proxy = Self.proxy(for: host)
        let socket = try connect(host: proxy?.host ?? host, port: proxy?.port ?? url.port ?? 80, deadline: deadline, url: url)
        do {
            var target = url.path.isEmpty ? "/" : url.path
            if let query = url.query { target += "?" + query }
            // Through a proxy the request names the whole URL.
            if proxy != nil { target = "http://\(url.port.map { "\(host):\($0)" } ?? host)" + target }
            let hostHeader = url.port.map { "\(host):\($0)" } ?? host
            let request = "GET \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: \(userAgent)\r\nIcy-MetaData: 1\r\nAccept: */*\r\nConnection: close\r\n\r\n"
            try send(socket, Array(request.utf8), deadline: deadline, url: url)

            // Headers, up to the blank line.
            var buffer: [UInt8] = []
            var headerEnd: Int?
            while headerEnd == nil {
                guard buffer.count < maximumHeaderBytes else {
                    throw TonearmError(.networkError, "\(url.absoluteString): the server's headers are larger than \(maximumHeaderBytes) bytes")
                }
                let chunk = try receive(socket, deadline: deadline, url: url)
                if chunk.isEmpty {
                    throw TonearmError(.networkError, "\(url.absoluteString): the server closed the connection without an answer")
                }
                buffer += chunk
                headerEnd = find([13, 10, 13, 10], in: buffer).map { $0 + 4 } ?? find([10, 10], in: buffer).map { $0 + 2 }
            }
            let headText = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
            var lines = headText.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" })
            guard !lines.isEmpty else { throw TonearmError(.networkError, "\(url.absoluteString): an empty answer") }
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/") || statusLine[0] == "ICY", let status = Int(statusLine[1]) else {
                throw TonearmError(.networkError, "\(url.absoluteString): not an HTTP answer")
            }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return Opened(socket: socket, status: status, headers: headers, rest: Array(buffer[headerEnd!...]))
        } catch {
            close(socket)
            throw error
        }
    }

    private static func once(_ url: URL, bodyLimit: Int, deadline: ContinuousClock.Instant, userAgent: String) throws -> Outcome {
        let opened = try open(url, deadline: deadline, userAgent: userAgent)
        let socket = opened.socket, status = opened.status, headers = opened.headers
        defer { close(socket) }
        if [301, 302, 303, 307, 308].contains(status), let location = headers["location"],
           let next = URL(string: location, relativeTo: url)?.absoluteURL {
            return .redirect(next)
        }
        var body = opened.rest
        var truncated = false
        let answerOnly = bodyLimit == 0 || !(200..<300).contains(status)
        if !answerOnly {
            let length = headers["content-length"].flatMap { Int($0) }
            while body.count <= bodyLimit, length.map({ body.count < $0 }) ?? true {
                let chunk = try receive(socket, deadline: deadline, url: url)
                if chunk.isEmpty { break }
                body += chunk
            }
            if headers["transfer-encoding"]?.lowercased().contains("chunked") == true { body = dechunk(body) }
            if body.count > bodyLimit {
                body = Array(body.prefix(bodyLimit))
                truncated = true
            }
        } else {
            body = []
        }
        return .answer(HTTPAnswer(url: url, status: status, headers: headers, body: Data(body), truncated: truncated))
    }

    /// The answer's status and headers, with the song a live stream names in its first ICY metadata block
    /// (`StreamTitle`), read from a request of its own: no title when the server sends none by `timeout` seconds, nil
    /// when it does not answer. Icecast hands a new listener the title of the audio it
    /// bursts, so the song is known before its audio has gone through the player's buffers.
    static func firstTitle(_ url: URL, timeout: Double, userAgent: String) -> (status: Int, headers: [String: String], title: String?)? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        guard let opened = try? open(url, deadline: deadline, userAgent: userAgent) else { return nil }
        defer { close(opened.socket) }
        let answer = (status: opened.status, headers: opened.headers, title: String?.none)
        guard (200..<300).contains(opened.status), let interval = opened.headers["icy-metaint"].flatMap({ Int($0) }),
              (1...maximumMetadataInterval).contains(interval) else { return answer }
        var bytes = opened.rest
        func fill(_ count: Int) -> Bool {
            while bytes.count < count {
                guard let chunk = try? receive(opened.socket, deadline: deadline, url: url), !chunk.isEmpty else { return false }
                bytes += chunk
            }
            return true
        }
        guard fill(interval + 1) else { return answer }
        let length = Int(bytes[interval]) * 16
        guard length > 0, fill(interval + 1 + length) else { return answer }
        return (opened.status, opened.headers, ICYMetadata.streamTitle(Array(bytes[(interval + 1)..<(interval + 1 + length)])))
    }

    /// The largest `icy-metaint` read through for the first title (servers use 8 to 32 KiB).
    static let maximumMetadataInterval = 64 * 1024

    /// The proxy `variable` (`http_proxy`, `https_proxy`) names (as GStreamer's HTTP source reads it), unless
    /// `no_proxy` exempts `host`.
    static func proxy(for host: String, variable: String = "http_proxy",
                      environment: [String: String] = ProcessInfo.processInfo.environment) -> (host: String, port: Int)? {
        guard let value = environment[variable] ?? environment[variable.uppercased()], !value.isEmpty,
              let url = URL(string: value.contains("://") ? value : "http://" + value), let proxyHost = url.host else { return nil }
        let exempt = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let name = host.lowercased()
        if exempt.contains(where: { $0 == "*" || name == $0 || (!$0.isEmpty && name.hasSuffix($0.hasPrefix(".") ? $0 : "." + $0)) }) { return nil }
        return (proxyHost, url.port ?? 8080)
    }

    // MARK: - Sockets

    private static func remaining(_ deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - .now
        guard left > .zero else { return 0 }
        return Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
    }

    private static func timedOut(_ url: URL) -> TonearmError {
        TonearmError(.timedOut, "\(url.absoluteString): the server did not answer in time")
    }

    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant, url: URL) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let found = getaddrinfo(host, String(port), &hints, &list)
        guard found == 0, let first = list else {
            throw TonearmError(.hostNotFound, "\(url.absoluteString): no such host \(host)")
        }
        defer { freeaddrinfo(list) }
        var refused = false
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                if errno == ECONNREFUSED { refused = true }
                close(fd)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, remaining(deadline))
            if ready == 0 {
                close(fd)
                throw timedOut(url)
            }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
            if ready > 0, error == 0 { return fd }
            if error == ECONNREFUSED { refused = true }
            close(fd)
        }
        if refused { throw TonearmError(.connectionRefused, "\(url.absoluteString): the server refused the connection") }
        throw TonearmError(.networkError, "\(url.absoluteString): cannot connect to \(host):\(port)")
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8], deadline: ContinuousClock.Instant, url: URL) throws {
        var sent = 0
        while sent < bytes.count {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, remaining(deadline)) > 0 else { throw timedOut(url) }
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw TonearmError(.networkError, "\(url.absoluteString): the server closed the connection")
            }
            sent += n
        }
    }

    /// The next bytes; empty at the end of the stream.
    private static func receive(_ fd: Int32, deadline: ContinuousClock.Instant, url: URL) throws -> [UInt8] {
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, remaining(deadline)) > 0 else { throw timedOut(url) }
            var chunk = [UInt8](repeating: 0, count: 16_384)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                if errno == ECONNRESET { return [] }
                throw TonearmError(.networkError, "\(url.absoluteString): \(String(cString: strerror(errno)))")
            }
            return Array(chunk.prefix(n))
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }

    /// A chunked body as plain bytes (what arrived, when cut short).
    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count, let lineEnd = find([13, 10], in: Array(bytes[i...])) {
            let sizeText = String(decoding: bytes[i..<(i + lineEnd)], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = i + lineEnd + 2
            let end = min(bytes.count, start + size)
            out += bytes[start..<end]
            i = end + 2
        }
        return out
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TonearmCore

/// https requests (the header probe and playlists) through AsyncHTTPClient with swift-nio-ssl: it trusts the system's
/// CAs or the streams plugin's trust bundle, and follows redirects, which Foundation's URLSession here cannot be told.
enum TLSFetch {
    /// GETs `url` (https); with `bodyLimit` 0 only the headers are read. `trustBundle`: the CAs to trust instead of
    /// the system's (a PEM file). Throws a `TonearmError` naming what went wrong.
    static func get(_ url: URL, bodyLimit: Int, timeout: Double, userAgent: String, trustBundle: String?) async throws -> HTTPAnswer {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustBundle { tls.trustRoots = .file(trustBundle) }
        let wait = TimeAmount.milliseconds(Int64(max(0.1, timeout) * 1000))
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .follow(max: PlainHTTP.maximumRedirects, allowCycles: false),
            timeout: .init(connect: wait, read: wait), proxy: proxy(for: url.host ?? ""))
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let result: Result<HTTPAnswer, TonearmError>
        do {
            result = .success(try await exchange(client, url, bodyLimit: bodyLimit, wait: wait, userAgent: userAgent))
        } catch {
            result = .failure(reason(error, url: url))
        }
        try? await client.shutdown()
        return try result.get()
    }

    private static func exchange(_ client: HTTPClient, _ url: URL, bodyLimit: Int, wait: TimeAmount,
                                 userAgent: String) async throws -> HTTPAnswer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Icy-MetaData", value: "1")
        let response = try await client.execute(request, timeout: wait * 3)
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { "\($0), \(value)" } ?? value
        }
        var body = Data()
        var truncated = false
        if bodyLimit > 0, (200..<300).contains(Int(response.status.code)) {
            // Leaving the loop early drops the body, which closes the connection: a live stream is never read on.
            for try await chunk in response.body {
                let room = bodyLimit - body.count
                if chunk.readableBytes > room {
                    body.append(contentsOf: chunk.readableBytesView.prefix(max(0, room)))
                    truncated = true
                    break
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
        }
        return HTTPAnswer(url: response.url ?? url, status: Int(response.status.code), headers: headers, body: body,
                          truncated: truncated)
    }

    /// The proxy `https_proxy` names (as GStreamer's HTTP source reads it), unless `no_proxy` exempts `host`.
    static func proxy(for host: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> HTTPClient.Configuration.Proxy? {
        PlainHTTP.proxy(for: host, variable: "https_proxy", environment: environment).map { .server(host: $0.host, port: $0.port) }
    }

    /// A transport error as an error a person can act on.
    static func reason(_ error: any Error, url: URL) -> TonearmError {
        let place = url.absoluteString
        if let error = error as? TonearmError { return error }
        if let client = error as? HTTPClientError {
            switch client {
            case .redirectLimitReached, .redirectCycleDetected:
                return TonearmError(.tooManyRedirects, "\(place): the server redirects in a loop")
            case .connectTimeout, .readTimeout, .deadlineExceeded, .tlsHandshakeTimeout:
                return TonearmError(.timedOut, "\(place): the server did not answer in time")
            case .remoteConnectionClosed:
                return TonearmError(.networkError, "\(place): the server closed the connection")
            case .cancelled:
                return TonearmError(.cancelled, "\(place): cancelled")
            default:
                return TonearmError(.networkError, "\(place): \(client)")
            }
        }
        if error is NIOSSLError || error is BoringSSLError {
            return TonearmError(.tlsError, "\(place): the secure connection failed (\(error)); is the server's certificate trusted?")
        }
        if let connection = error as? NIOConnectionError {
            if connection.dnsAError != nil && connection.dnsAAAAError != nil && connection.connectionErrors.isEmpty {
                return TonearmError(.hostNotFound, "\(place): no such host \(url.host ?? "")")
            }
            if connection.connectionErrors.contains(where: { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }) {
                return TonearmError(.connectionRefused, "\(place): the server refused the connection")
            }
            return TonearmError(.networkError, "\(place): cannot connect to \(url.host ?? "")")
        }
        if let io = error as? IOError, io.errnoCode == ECONNREFUSED {
            return TonearmError(.connectionRefused, "\(place): the server refused the connection")
        }
        return TonearmError(.networkError, "\(place): \(error)")
    }
}

import Foundation
import TonearmCore

/// `[plugins.streams]`: time-outs, reconnecting, the user agent and the bounds on playlists fetched from the network.
public struct StreamsSettings: Sendable, Equatable {
    /// Seconds to wait for a server's answer (connect and headers) to the plugin's own requests: a playlist, a live
    /// stream's song, a failed stream's fault.
    public var connectTimeout: Double = 10
    /// Seconds without data before a playing stream counts as stalled (GStreamer's souphttpsrc `timeout`).
    public var readTimeout: Double = 15
    /// How many times a live stream that drops is reconnected before the player moves on.
    public var reconnectAttempts = 5
    /// The first wait before reconnecting, in seconds; it doubles on each attempt, up to `reconnectMaxDelay`.
    public var reconnectDelay: Double = 1
    /// The longest wait between two reconnect attempts, in seconds.
    public var reconnectMaxDelay: Double = 30
    /// The User-Agent header sent to servers.
    public var userAgent = "Tonearm/1.0"
    /// The largest playlist read from the network, in bytes.
    public var playlistMaxBytes = 1 << 20
    /// The most entries a playlist may hold (more are refused, not cut).
    public var playlistMaxEntries = 10_000
    /// A PEM file of certificate authorities https streams trust besides the system's (a private server's CA).
    public var caFile: String?
    /// The file https trusts when `caFile` is set: the system's CAs and `caFile`'s together (`preparingTrust`).
    public private(set) var trustBundle: String?

    public init() {}

    /// Reads the section; every key has a default, a bad value is an error naming the key.
    public init(section table: [String: ConfigValue]) throws(TonearmError) {
        let section = try ConfigSection("[plugins.streams]", table, known: Self.keys.sorted())
        connectTimeout = try section.number("connect-timeout", connectTimeout, 0.1...600)
        readTimeout = try section.number("read-timeout", readTimeout, 1...600)
        reconnectAttempts = try section.integer("reconnect-attempts", reconnectAttempts, 0...100)
        reconnectDelay = try section.number("reconnect-delay", reconnectDelay, 0...600)
        reconnectMaxDelay = try section.number("reconnect-max-delay", reconnectMaxDelay, 0...3600)
        userAgent = try section.line("user-agent") ?? userAgent
        playlistMaxBytes = try section.integer("playlist-max-bytes", playlistMaxBytes, 1024...(64 << 20))
        playlistMaxEntries = try section.integer("playlist-max-entries", playlistMaxEntries, 1...100_000)
        caFile = try section.path("ca-file")?.path
    }

    /// The system's CA bundle on Debian and its kin.
    public static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// These settings with `trustBundle` written into `folder` when `caFile` is set: GStreamer's HTTP source and the
    /// TLS client each take one file of CAs, which replaces the system's, so the file holds both. A `caFile` that
    /// cannot be read or holds no certificate is an error naming it.
    public func preparingTrust(in folder: URL, systemBundle: String = Self.systemBundle) throws(TonearmError) -> StreamsSettings {
        guard let caFile else { return self }
        guard let extra = FileManager.default.contents(atPath: caFile),
              String(decoding: extra, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw TonearmError(.invalidConfig, "[plugins.streams] ca-file \(caFile) cannot be read or holds no PEM certificate")
        }
        let system = FileManager.default.contents(atPath: systemBundle) ?? Data()
        let bundle = folder.appendingPathComponent("streams-trust.pem")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try (system + Data("\n".utf8) + extra).write(to: bundle, options: .atomic)
        } catch {
            throw TonearmError(.invalidConfig, "[plugins.streams] cannot write \(bundle.path): \(error.localizedDescription)")
        }
        var settings = self
        settings.trustBundle = bundle.path
        return settings
    }

    static let keys: Set<String> = ["connect-timeout", "read-timeout", "reconnect-attempts", "reconnect-delay",
                                    "reconnect-max-delay", "user-agent", "playlist-max-bytes", "playlist-max-entries", "ca-file"]

    /// The policy the player follows when a live stream drops.
    public var reconnect: StreamReconnectPolicy {
        StreamReconnectPolicy(attempts: reconnectAttempts, firstDelay: .milliseconds(Int64(reconnectDelay * 1000)),
                              maximumDelay: .milliseconds(Int64(reconnectMaxDelay * 1000)),
                              stallTimeout: .milliseconds(Int64(readTimeout * 1000)))
    }

    /// Properties of GStreamer's HTTP source, by element factory (the daemon hands them to the pipeline).
    public var elementSettings: [String: [String: String]] {
        // Twice the player's own stall watch: the watch names the fault (Stalled, or a reconnect) before the source
        // gives up on its own with an error that says less ("Internal data stream error").
        var soup = ["user-agent": userAgent, "timeout": String(Int((readTimeout * 2).rounded(.up)))]
        if let trustBundle { soup["tls-database"] = trustBundle }  // PipelineShell makes it a GTlsDatabase
        return ["souphttpsrc": soup]
    }

    /// The effective values, key by key (for `tonearm config`).
    public var values: [(String, ConfigValue)] {
        [
            ("connect-timeout", .double(connectTimeout)), ("read-timeout", .double(readTimeout)),
            ("reconnect-attempts", .int(reconnectAttempts)), ("reconnect-delay", .double(reconnectDelay)),
            ("reconnect-max-delay", .double(reconnectMaxDelay)), ("user-agent", .string(userAgent)),
            ("playlist-max-bytes", .int(playlistMaxBytes)), ("playlist-max-entries", .int(playlistMaxEntries)),
        ] + (caFile.map { [("ca-file", ConfigValue.string($0))] } ?? [])
    }
}

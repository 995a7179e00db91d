import Foundation
import TonearmCore

/// `[plugins.scrobble]`: where listens are sent (any ListenBrainz-compatible server), where the token is read from,
/// and how the queue sends and retries.
public struct ScrobbleSettings: Sendable, Equatable {
    /// Off unless asked for: it tells a server what you listen to.
    public var enabled: Bool
    /// The API root: https://api.listenbrainz.org, Maloja's http://HOST:PORT/apis/listenbrainz, Koito's …/apis/listenbrainz.
    public var url: URL
    /// A file holding the token (only its first line is read), or the name of an environment variable holding it. The
    /// token itself is never written in the config (config files end up in dotfile repositories and backups).
    public var tokenFile: URL?
    public var tokenEnvironment: String?
    /// The most listens sent in one request while catching up (ListenBrainz takes up to 1000).
    public var batchSize: Int
    /// Seconds a request may take before it counts as failed (a server that hangs).
    public var timeout: Double
    /// Seconds before the first retry after a failure; each further failure doubles it, up to `maximumRetryDelay`.
    public var retryDelay: Double
    public var maximumRetryDelay: Double

    public static let keys = ["enabled", "url", "token-file", "token-env", "batch-size", "timeout", "retry-delay", "max-retry-delay"]
    public static let defaultURL = "https://api.listenbrainz.org"

    public init(section: [String: ConfigValue]) throws(TonearmError) {
        if section["token"] != nil {
            throw TonearmError(.invalidConfig, "[plugins.scrobble] token: not read from the config; put the token in a file (token-file) or an environment variable (token-env)")
        }
        let s = try ConfigSection("[plugins.scrobble]", section, known: Self.keys)
        enabled = try s.bool("enabled", false)
        let text = try s.line("url") ?? Self.defaultURL
        guard var url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else {
            throw s.fail("url", "an http or https URL such as \(Self.defaultURL) or http://localhost:42010/apis/listenbrainz")
        }
        while url.absoluteString.hasSuffix("/") { url = URL(string: String(url.absoluteString.dropLast()))! }
        self.url = url
        tokenFile = try s.path("token-file")
        tokenEnvironment = try s.line("token-env")
        batchSize = try s.integer("batch-size", 100, 1...1000)
        timeout = try s.number("timeout", 30, 0.1...600)
        retryDelay = try s.number("retry-delay", 15, 0.05...86_400)
        maximumRetryDelay = try s.number("max-retry-delay", 1800, 0.05...86_400)
        if maximumRetryDelay < retryDelay { throw s.fail("max-retry-delay", "at least retry-delay (\(retryDelay))") }
    }

    /// The effective values, for `tonearm config` (never the token).
    public var values: [(String, ConfigValue)] {
        [("enabled", .bool(enabled)), ("url", .string(url.absoluteString)), ("token-file", .string(tokenFile?.path ?? "")),
         ("token-env", .string(tokenEnvironment ?? "")), ("batch-size", .int(batchSize)), ("timeout", .double(timeout)),
         ("retry-delay", .double(retryDelay)), ("max-retry-delay", .double(maximumRetryDelay))]
    }

    /// The token from the file or the environment (the file first); throws a message a person can act on.
    public func token(environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) -> String {
        if let tokenFile {
            guard let text = try? String(contentsOf: tokenFile, encoding: .utf8) else {
                throw TonearmError(.notReadable, "cannot read the token file \(tokenFile.path) ([plugins.scrobble] token-file)")
            }
            let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !token.isEmpty else { throw TonearmError(.invalidConfig, "the token file \(tokenFile.path) is empty") }
            return token
        }
        if let name = tokenEnvironment {
            let token = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard !token.isEmpty else { throw TonearmError(.invalidConfig, "the environment variable \(name) ([plugins.scrobble] token-env) is not set") }
            return token
        }
        throw TonearmError(.invalidConfig, "[plugins.scrobble] has no token: set token-file (a file holding it) or token-env (an environment variable)")
    }
}

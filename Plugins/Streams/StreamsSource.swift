import Foundation
import Logging
import TonearmCore

/// Internet radio and files over HTTP(S), and playlist files (M3U/M3U8, PLS, XSPF) from disk or the network.
///
/// A stream URL is queued without a request of its own: the player's request is the first, and what its answer says
/// (station name, live or a file of known length) reaches `applying(_:to:)`. Beside it, a live stream is asked for the
/// song it plays now; a stream that fails before it is heard is asked again to name why (an HTTP error, a refused
/// connection) or found to be a playlist served under a plain name. Nothing here blocks a thread: every request is
/// async, with the configured time-out.
public struct StreamsSource: SourcePlugin {
    public let name = "streams"
    public let settings: StreamsSettings
    let logger: Logger

    public init(settings: StreamsSettings = StreamsSettings(), logger: Logger = Logger(label: "tonearm.streams")) {
        self.settings = settings
        self.logger = logger
    }

    /// The URI schemes this plugin plays (icy/icyx are SHOUTcast's names for http/https).
    public static let schemes = ["http", "https", "icy", "icyx"]

    public func canResolve(_ uri: URL) -> Bool {
        uri.scheme.map { Self.schemes.contains($0.lowercased()) } ?? false
    }

    /// The http(s) URL a stream URI is fetched from.
    static func transportURL(_ uri: URL) -> URL {
        guard var parts = URLComponents(url: uri, resolvingAgainstBaseURL: false), let scheme = uri.scheme?.lowercased() else { return uri }
        switch scheme {
        case "icy": parts.scheme = "http"
        case "icyx": parts.scheme = "https"
        default: parts.scheme = scheme
        }
        return parts.url ?? uri
    }

    /// A stream as it is queued, before any server answered: named after its URL.
    public func resolve(_ uri: URL) async throws -> TrackMetadata {
        let url = Self.transportURL(uri)
        guard let host = url.host, !host.isEmpty else { throw TonearmError(.invalidUri, "no host in \(uri.absoluteString)") }
        var metadata = TrackMetadata(url: uri.absoluteString)
        if url.absoluteString != uri.absoluteString { metadata.streamURL = url.absoluteString }
        metadata.title = Self.placeholderTitle(url)
        return metadata
    }

    /// The title of a stream no server has named yet: its file name, or its host.
    static func placeholderTitle(_ url: URL) -> String? {
        let name = url.deletingPathExtension().lastPathComponent
        return name.isEmpty || name == "/" ? url.host : name
    }

    /// What a server's answer says of a stream: its station, genre, whether it is live, whether it seeks by ranges.
    public func applying(_ response: StreamResponse, to metadata: TrackMetadata) -> TrackMetadata {
        guard (200..<300).contains(response.status) else { return metadata }
        let answer = HTTPAnswer(url: URL(string: metadata.streamURL ?? metadata.url) ?? URL(fileURLWithPath: "/"),
                                status: response.status, headers: response.headers, body: Data(), truncated: false)
        var out = metadata
        out.isLive = answer.isLive
        // A file served with byte ranges seeks, whatever the pipeline's first seeking query says (wavparse reading
        // from the network can answer no until it has parsed its header).
        out.seeksDespiteQuery = !answer.isLive && answer.header("accept-ranges")?.lowercased() == "bytes" ? true : nil
        if let station = answer.stationName {
            // The station names the stream until a song does.
            if out.title == nil || out.title == Self.placeholderTitle(answer.url) || out.title == out.station { out.title = station }
            out.station = station
        }
        if out.genres.isEmpty, let genre = answer.header("icy-genre"), !genre.isEmpty { out.genres = [genre] }
        return out
    }

    /// A stream that may be live is asked, beside the player's own request, for the song it plays now (the first ICY
    /// metadata block): the title the pipeline reports comes only once that audio is heard, seconds later. The same
    /// answer's headers say what the player's will, so whichever comes first the track reads the same. Left as it is
    /// when the stream says nothing in time. (The first block names the song of the audio the server bursts, which is
    /// the one the player starts with.)
    public func enrich(_ metadata: TrackMetadata) async -> TrackMetadata {
        // A file (its server said so, or its sender gave its length) has no song to ask for.
        guard metadata.isLive ?? ((metadata.length ?? 0) <= 0), let uri = URL(string: metadata.streamURL ?? metadata.url),
              uri.scheme?.lowercased() == "http" else { return metadata }
        let settings = settings
        guard let answer = try? await HTTPFetch.requests.run({
            PlainHTTP.firstTitle(uri, timeout: settings.connectTimeout, userAgent: settings.userAgent)
        }) else { return metadata }
        var out = applying(StreamResponse(status: answer.status, headers: answer.headers), to: metadata)
        let song = StreamTitle(title: answer.title, artists: [])
        guard out.isLive == true, let name = song.title else { return out }
        out.title = name
        out.artists = song.artists
        return out
    }

    /// A network stream that failed before it was heard.
    public func explainsFailures(of metadata: TrackMetadata) -> Bool {
        URL(string: metadata.url).map(canResolve) ?? false
    }

    /// Asks the server again: its error, named (HTTP status, refused connection, unknown host, redirect loop), or the
    /// playlist it serves under a name that did not say so.
    public func explainFailure(of metadata: TrackMetadata) async -> FailureExplanation? {
        guard let uri = URL(string: metadata.url) else { return nil }
        do {
            return try await networkExpansion(uri, named: nil).map { .playlist($0) }
        } catch let error as TonearmError {
            return .error(error)
        } catch {
            return nil
        }
    }

    /// Streams carry their tags in-band (ICY StreamTitle, Ogg comments of each chain): the current song replaces the
    /// title and artist; the station stays in `station`.
    public func applying(_ tags: MediaTags, to metadata: TrackMetadata, artCache: ArtCache) -> TrackMetadata {
        var out = metadata
        var songTags = tags
        if let station = tags.organization, !station.isEmpty { out.station = station }
        if metadata.isLive == true {
            // A new song of a live stream: its own fields, nothing kept from the last one.
            let song = StreamTitle(title: tags.title, artists: tags.artists)
            songTags.title = nil
            songTags.artists = []
            out = out.merging(songTags, artCache: artCache)
            if let title = song.title {
                out.title = title
                out.artists = song.artists
            } else if out.title == nil {
                out.title = out.station
            }
            return out
        }
        return out.merging(songTags, artCache: artCache)
    }

    public func expand(_ uri: URL) async throws -> PlaylistExpansion? {
        if uri.isFileURL {
            guard let format = PlaylistFormat.named(path: uri.path) else { return nil }
            let data: Data
            do {
                let handle = try FileHandle(forReadingFrom: uri)
                defer { try? handle.close() }
                data = try handle.read(upToCount: 64 << 20) ?? Data()
            } catch {
                if access(uri.path, F_OK) != 0 { throw TonearmError.noSuchFile(uri.path) }
                throw TonearmError.notReadable(uri.path)
            }
            return try expansion(PlaylistParser.text(data), format: format, base: uri)
        }
        guard canResolve(uri) else { return nil }
        // Only a URL that names a playlist is read before it is queued; any other is played at once (one that turns
        // out to be a playlist is found when it fails: `explainFailure`).
        guard let named = PlaylistFormat.named(path: Self.transportURL(uri).path) else { return nil }
        return try await networkExpansion(uri, named: named)
    }

    /// The playlist a network URL serves (by its name, its content type, or a text answer's content), or nil when it
    /// serves something else; throws the server's error, named.
    private func networkExpansion(_ uri: URL, named: PlaylistFormat?) async throws -> PlaylistExpansion? {
        let url = Self.transportURL(uri)
        let answer = try await fetch(url, body: named != nil)
        if let error = HTTPFetch.statusError(answer, url: url) { throw error }
        var format = PlaylistFormat.named(path: url.path, contentType: answer.contentType)
        if format == nil, named == nil {
            guard let type = answer.contentType?.lowercased(), type.hasPrefix("text/") || type.contains("xml") else { return nil }
            // A text answer: a playlist served as text/plain? Read it to tell.
            let full = try await fetch(url, body: true)
            format = PlaylistParser.sniff(PlaylistParser.text(full.body))
            guard let format else { return nil }
            return try networkExpansion(full, format: format, uri: uri)
        }
        guard let format else { return nil }
        let full = answer.body.isEmpty ? try await fetch(url, body: true) : answer
        return try networkExpansion(full, format: format, uri: uri)
    }

    private func networkExpansion(_ answer: HTTPAnswer, format: PlaylistFormat, uri: URL) throws -> PlaylistExpansion? {
        if let error = HTTPFetch.statusError(answer, url: answer.url) { throw error }
        guard !answer.truncated else {
            throw TonearmError(.playlistTooLarge, "the playlist \(uri.absoluteString) is larger than \(settings.playlistMaxBytes) bytes ([plugins.streams] playlist-max-bytes)")
        }
        let text = PlaylistParser.text(answer.body)
        // HTTP Live Streaming: one stream in segments, which GStreamer plays itself.
        if format == .m3u, PlaylistParser.isHLS(text) { return nil }
        // Relative entries resolve against where the list really came from (after redirects).
        return try expansion(text, format: format, base: answer.url)
    }

    func expansion(_ text: String, format: PlaylistFormat, base: URL) throws -> PlaylistExpansion {
        let entries: [PlaylistEntry]
        do {
            entries = try PlaylistParser.parse(text, format: format, maximumEntries: settings.playlistMaxEntries)
        } catch {
            throw TonearmError(.invalidPlaylist, "cannot read the playlist \(base.absoluteString): \(error.message)")
        }
        var out = PlaylistExpansion(uris: [])
        for entry in entries {
            switch PlaylistLocations.resolve(entry.location, against: base) {
            case .success(let uri): out.uris.append(uri)
            case .failure(let error): out.skipped.append((entry.location, TonearmError(.refusedEntry, error.message)))
            }
        }
        return out
    }

    // MARK: - Requests

    private func fetch(_ url: URL, body: Bool) async throws -> HTTPAnswer {
        let answer = try await HTTPFetch.get(url, bodyLimit: body ? settings.playlistMaxBytes : 0,
                                             timeout: settings.connectTimeout, userAgent: settings.userAgent,
                                             trustBundle: settings.trustBundle)
        return answer
    }
}

/// An ICY StreamTitle ("Artist - Title") as title and artists; tags that name the artist apart are kept as they are.
public struct StreamTitle: Sendable, Equatable {
    public var title: String?
    public var artists: [String]

    public init(title: String?, artists: [String]) {
        guard let raw = title?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty else {
            self.title = nil
            self.artists = artists
            return
        }
        if artists.isEmpty, let dash = raw.range(of: " - ") {
            let artist = raw[..<dash.lowerBound].trimmingCharacters(in: .whitespaces)
            let song = raw[dash.upperBound...].trimmingCharacters(in: .whitespaces)
            if !artist.isEmpty, !song.isEmpty {
                self.title = song
                self.artists = [artist]
                return
            }
        }
        self.title = raw
        self.artists = artists
    }
}

import Foundation
import TonearmCore
import XMLTree

/// DIDL-Lite, the metadata a controller sends with a URI and a renderer reports back: read into what Tonearm shows,
/// and written from a queued track.
public enum DIDLLite {
    /// What a controller said of the item it casts: only the fields shown in MPRIS Metadata.
    public struct Item: Sendable, Equatable {
        public var title: String?
        public var artists: [String] = []
        public var album: String?
        public var albumArtists: [String] = []
        public var genres: [String] = []
        public var trackNumber: Int?
        /// An http(s) URL of cover art.
        public var artURL: String?
        /// Microseconds, from the resource's `duration`.
        public var duration: Int64?

        public init() {}
    }

    /// Reads the first item (or container) of a DIDL-Lite document; nil for empty metadata or metadata that is not
    /// DIDL-Lite (many controllers send none: the cast still plays).
    public static func item(_ text: String) -> Item? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed != "NOT_IMPLEMENTED", let root = try? XMLElement.parse(trimmed, maximumElements: 500),
              root.name == "DIDL-Lite", let node = root.child("item") ?? root.child("container") else { return nil }
        var item = Item()
        func texts(_ name: String) -> [String] {
            node.children.filter { $0.name == name }.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        }
        item.title = texts("title").first
        // upnp:artist with role="AlbumArtist" names the album's artist; without a role (or "Performer"), the track's.
        for artist in node.children where artist.name == "artist" {
            let name = artist.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty else { continue }
            if artist.attributes["role"]?.lowercased() == "albumartist" { item.albumArtists.append(name) } else { item.artists.append(name) }
        }
        if item.artists.isEmpty { item.artists = texts("creator") }
        item.album = texts("album").first
        item.genres = texts("genre")
        item.trackNumber = texts("originalTrackNumber").first.flatMap { Int($0) }
        item.artURL = texts("albumArtURI").first { Self.isWebURL($0) }
        if let duration = node.children.first(where: { $0.name == "res" })?.attributes["duration"] {
            item.duration = UPnPTime.microseconds(duration).flatMap { $0 > 0 ? $0 : nil }
        }
        return item
    }

    /// Whether a URI is one a controller may make the renderer fetch: http or https, with a host.
    public static func isWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return false }
        return true
    }

    /// A track as DIDL-Lite, for CurrentTrackMetaData and AVTransportURIMetaData.
    public static func document(_ metadata: TrackMetadata, id: String, mimeType: String?) -> String {
        var item = "<item id=\"\(xmlEscaped(id))\" parentID=\"0\" restricted=\"1\">"
        item += "<dc:title>\(xmlEscaped(metadata.title ?? Self.fileName(metadata.url)))</dc:title>"
        for artist in metadata.artists {
            item += "<upnp:artist>\(xmlEscaped(artist))</upnp:artist><dc:creator>\(xmlEscaped(artist))</dc:creator>"
        }
        for artist in metadata.albumArtists { item += "<upnp:artist role=\"AlbumArtist\">\(xmlEscaped(artist))</upnp:artist>" }
        if let album = metadata.album { item += "<upnp:album>\(xmlEscaped(album))</upnp:album>" }
        for genre in metadata.genres { item += "<upnp:genre>\(xmlEscaped(genre))</upnp:genre>" }
        if let n = metadata.trackNumber { item += "<upnp:originalTrackNumber>\(n)</upnp:originalTrackNumber>" }
        // A local cover file means nothing to a controller on another machine; only a web address is passed on.
        if let art = metadata.artUrl, isWebURL(art) { item += "<upnp:albumArtURI>\(xmlEscaped(art))</upnp:albumArtURI>" }
        item += "<upnp:class>object.item.audioItem.musicTrack</upnp:class>"
        let duration = metadata.length.map { " duration=\"\(UPnPTime.text($0))\"" } ?? ""
        // Only a web address is shown: a local path would tell the network what is on this disk.
        let res = isWebURL(metadata.url) ? xmlEscaped(metadata.url) : ""
        item += "<res protocolInfo=\"http-get:*:\(xmlEscaped(mimeType ?? "*")):*\"\(duration)>\(res)</res></item>"
        return "<DIDL-Lite xmlns=\"urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
            + "xmlns:upnp=\"urn:schemas-upnp-org:metadata-1-0/upnp/\">\(item)</DIDL-Lite>"
    }

    static func fileName(_ url: String) -> String {
        URL(string: url)?.lastPathComponent.removingPercentEncoding ?? url
    }
}

extension DIDLLite.Item {
    /// The hint the player merges into what its plugins found.
    public var hint: TrackHint {
        TrackHint(title: title, artists: artists, album: album, albumArtists: albumArtists, genres: genres,
                  trackNumber: trackNumber, artUrl: artURL, length: duration)
    }
}

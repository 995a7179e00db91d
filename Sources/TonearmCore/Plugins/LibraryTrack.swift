@_exported import LibraryRecord

/// The library's record as the player plays it.
extension LibraryTrack {
    /// What MPRIS says about this track.
    public var metadata: TrackMetadata {
        var m = TrackMetadata(url: uri, title: title)
        if !artist.isEmpty { m.artists = [artist] }
        if !album.isEmpty { m.album = album }
        if !albumArtist.isEmpty { m.albumArtists = [albumArtist] }
        m.trackNumber = trackNumber
        m.discNumber = discNumber
        if let genre, !genre.isEmpty { m.genres = [genre] }
        m.year = year
        if duration > 0 { m.length = Int64((duration * 1_000_000).rounded()) }
        m.artUrl = artUrl
        m.loudness = loudness
        m.musicBrainz = musicBrainz
        return m
    }
}

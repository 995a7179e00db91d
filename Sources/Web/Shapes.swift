import Foundation
import TonearmCore

/// How the Player's values look in the API (docs/web-api.md): times in seconds, ids as the queue entry's number.
enum Shapes {
    static func track(_ track: Track) -> JSON {
        let m = track.metadata
        return [
            "id": .int(Int64(track.id.serial ?? 0)), "uri": .string(m.url), "title": .string(m.title),
            "artists": .array(m.artists.map(JSON.string)), "album": .string(m.album),
            "albumArtists": .array(m.albumArtists.map(JSON.string)), "trackNumber": .int(m.trackNumber),
            "discNumber": .int(m.discNumber), "genres": .array(m.genres.map(JSON.string)),
            "length": .seconds(micro: m.length.flatMap { $0 > 0 ? $0 : nil }),
            "art": m.artUrl == nil ? .null : .string("/api/v1/art/\(track.id.serial ?? 0)"),
            "station": .string(m.station), "live": .bool(m.isLive ?? false),
        ]
    }

    static func id(_ id: TrackID?) -> JSON {
        guard let id, id != .noTrack, let serial = id.serial else { return .null }
        return .int(Int64(serial))
    }

    static func state(_ state: PlayerState, at now: ContinuousClock.Instant = .now) -> JSON {
        let (before, after) = stateMembers(state)
        return .object(before + [("position", position(state, at: now))] + after)
    }

    /// The state's members before "position" and after it: the position is the one member that moves between two
    /// publishes, so `StateText` keeps the others' text and writes only it afresh.
    static func stateMembers(_ state: PlayerState) -> (before: [(String, JSON)], after: [(String, JSON)]) {
        let s = state.snapshot
        var lyricsLine: JSON = .null
        if let line = s.lyricsLine {
            lyricsLine = ["index": .int(Int64(line.index)), "start": .seconds(micro: line.start), "text": .string(line.text)]
        }
        return ([("sequence", .int(Int64(state.sequence))), ("status", .string(s.status.rawValue)),
                 ("track", s.current.map(track) ?? .null)],
                [("rate", .double(s.rate)), ("volume", .double(s.volume)), ("loop", .string(s.loop.rawValue)),
                 ("shuffle", .bool(s.shuffle)), ("canGoNext", .bool(s.canGoNext)), ("canGoPrevious", .bool(s.canGoPrevious)),
                 ("canPlay", .bool(s.canPlay)), ("canPause", .bool(s.canPause)), ("canSeek", .bool(s.canSeek)),
                 ("queueVersion", .int(Int64(s.queueVersion))), ("next", id(s.nextID)),
                 ("replayGain", .string(s.replayGainMode.rawValue)), ("crossfade", .double(s.crossfade)),
                 ("output", .string(s.output)), ("outputProblem", .string(s.outputProblem)),
                 ("outputs", .array(s.outputs.map(output))), ("buffering", .int(Int64(s.buffering))),
                 ("lyricsLine", lyricsLine), ("equalizer", equalizer(s, full: false))])
    }

    /// The state's "position" member at `now`: 0 with no current track.
    static func position(_ state: PlayerState, at now: ContinuousClock.Instant) -> JSON {
        .seconds(micro: state.snapshot.current == nil ? 0 : state.position.position(at: now))
    }

    /// {"equalizer": "off" | preset | "custom", "bands": [10 dB], "preamp": dB}; `full` adds "presets" and
    /// "frequencies".
    static func equalizer(_ s: PlayerSnapshot, full: Bool) -> JSON {
        var fields: [(String, JSON)] = [("equalizer", .string(s.equalizer.name)),
                                        ("bands", .array(s.equalizer.curve.bands.map { .double($0) })),
                                        ("preamp", .double(s.equalizer.curve.preamp))]
        if full {
            fields.append(("presets", .array(s.equalizerPresets.map { .string($0) })))
            fields.append(("frequencies", .array(EqualizerSettings.frequencies.map { .double($0) })))
        }
        return .object(fields)
    }

    static func queue(_ snapshot: PlayerSnapshot) -> JSON {
        ["version": .int(Int64(snapshot.queueVersion)), "current": id(snapshot.current?.id),
         "tracks": .array(snapshot.tracks.map(track))]
    }

    static func output(_ o: OutputDescription) -> JSON {
        ["name": .string(o.name), "kind": .string(o.kind), "detail": .string(o.detail)]
    }

    static func libraryTrack(_ t: LibraryTrack, art: (String?) -> String?) -> JSON {
        ["uri": .string(t.uri), "path": .string(t.path), "title": .string(t.title), "artist": .string(t.artist),
         "album": .string(t.album), "albumArtist": .string(t.albumArtist), "genre": .string(t.genre), "year": .int(t.year),
         "trackNumber": .int(t.trackNumber), "discNumber": .int(t.discNumber), "duration": .double(t.duration),
         "art": .string(art(t.artUrl))]
    }

    static func offer(_ o: PendingShareOffer) -> JSON {
        ["id": .string(o.id), "sender": .string(o.sender), "address": .string(o.address), "fingerprint": .string(o.fingerprint),
         "files": .array(o.files.indices.map { i in
             ["name": .string(o.files[i]), "size": .int(i < o.sizes.count ? o.sizes[i] : 0)]
         })]
    }
}

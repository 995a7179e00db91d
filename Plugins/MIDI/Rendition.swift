import Foundation
import RawPaths
import TonearmCore

/// GStreamer's midiparse (1.22) times every event by its tick and the tempo in force *now*, so a tempo change
/// re-times everything before it; it also refuses format 2 and SMPTE time. Such files are rewritten into one
/// that sounds the same and that midiparse times right: one fixed tempo, events placed by the real time the
/// tempo map gives them, format 2 patterns one after another in a single track.
enum Rendition {
    /// Ticks per quarter note of a rendition, at 120 beats per minute: 1,920 ticks a second (0.52 ms).
    static let ticksPerQuarter = 960
    static let ticksPerSecond = Double(ticksPerQuarter) * 1e6 / Double(TempoMap.defaultTempo)

    /// The playable form of `file`, or nil when midiparse plays the file as it is.
    static func playable(_ file: StandardMIDIFile) -> StandardMIDIFile? {
        let smpte = file.division.smpteTicksPerSecond != nil
        guard file.format == 2 || smpte || changesTempo(file) else { return nil }
        var tracks: [MIDITrack]
        if file.format == 2 {
            var merged: [MIDIEvent] = []
            var start = 0.0
            for track in file.tracks {
                let map = TempoMap(division: file.division, tracks: [track])
                merged += retimed(track.events, map, offset: start)
                start += map.seconds(atTick: track.endTick)
            }
            tracks = [MIDITrack(events: merged + [endOfTrack(at: start)])]
        } else {
            let map = TempoMap(file)
            tracks = file.tracks.map { track in
                MIDITrack(events: retimed(track.events, map, offset: 0) + [endOfTrack(at: map.seconds(atTick: track.endTick))])
            }
        }
        tracks[0].events.insert(tempoEvent(tick: 0, TempoMap.defaultTempo), at: 0)
        return StandardMIDIFile(format: file.format == 2 ? 0 : file.format, division: .ticksPerQuarter(ticksPerQuarter), tracks: tracks)
    }

    /// Whether the tempo differs anywhere from the tempo at the start.
    static func changesTempo(_ file: StandardMIDIFile) -> Bool {
        var first: Int?
        for track in file.tracks {
            for event in track.events {
                guard let tempo = event.tempo else { continue }
                if event.tick == 0, first == nil { first = tempo; continue }
                if tempo != (first ?? TempoMap.defaultTempo) { return true }
            }
        }
        return false
    }

    /// Events at the ticks of a fixed tempo, placed by their real time; tempo and End of Track events dropped.
    private static func retimed(_ events: [MIDIEvent], _ map: TempoMap, offset: Double) -> [MIDIEvent] {
        events.compactMap { event in
            guard event.tempo == nil, !event.isEndOfTrack else { return nil }
            return MIDIEvent(tick: tick(offset + map.seconds(atTick: event.tick)), kind: event.kind)
        }
    }

    private static func endOfTrack(at seconds: Double) -> MIDIEvent {
        MIDIEvent(tick: tick(seconds), kind: .meta(type: MIDIEvent.Meta.endOfTrack, data: []))
    }

    private static func tick(_ seconds: Double) -> Int { Int((seconds * ticksPerSecond).rounded()) }

    static func tempoEvent(tick: Int, _ tempo: Int) -> MIDIEvent {
        MIDIEvent(tick: tick, kind: .meta(type: MIDIEvent.Meta.tempo,
                                          data: [UInt8(tempo >> 16 & 0xFF), UInt8(tempo >> 8 & 0xFF), UInt8(tempo & 0xFF)]))
    }
}

/// Renditions on disk, named after the original's path, size and modification time, so an edited file gets a
/// new one and an unchanged one is written once.
struct RenditionCache: Sendable {
    let folder: URL

    /// The URL of the playable rendition of the file at `path`, written now when missing.
    func url(for path: RawPath, info: stat, file: StandardMIDIFile) throws -> URL? {
        guard let playable = Rendition.playable(file) else { return nil }
        // The path's bytes, then size and time: for a UTF-8 path, the same key as when paths were Strings.
        let key = path.bytes + Array("\0\(info.st_size)\0\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)".utf8)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let url = folder.appendingPathComponent(String(hash, radix: 16) + ".mid")
        if access(url.path, R_OK) != 0 {
            try AtomicFile.write(Data(SMFWriter.bytes(playable)), to: url)
        }
        return url
    }
}

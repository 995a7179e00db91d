import Foundation
import TonearmCore

/// GStreamer's midiparse plays formats 0 and 1 in musical time only. A format 2 file or one in SMPTE time is
/// rewritten into a format 0 file in musical time that sounds the same, and that file is what plays.
enum Rendition {
    /// The playable form of `file`, or nil when midiparse plays the file as it is.
    static func playable(_ file: StandardMIDIFile) -> StandardMIDIFile? {
        var out = file
        var changed = false
        if case .smpte(let fps, let tpf) = file.division, let perSecond = file.division.smpteTicksPerSecond {
            // Same tick length in musical time: ppq ticks per quarter at a tempo of ppq/perSecond seconds each.
            let ppq = tpf * (fps == 29 ? 30 : fps)
            let tempo = Int((Double(ppq) * 1e6 / perSecond).rounded())
            out.division = .ticksPerQuarter(ppq)
            out.tracks = file.tracks.map { track in
                // Tempo events mean nothing in SMPTE time; every track (pattern) starts at the fixed tempo.
                var events = track.events.filter { $0.tempo == nil }
                events.insert(tempoEvent(tick: 0, tempo), at: 0)
                return MIDITrack(events: events, hasEndOfTrack: track.hasEndOfTrack)
            }
            changed = true
        }
        if out.format == 2 {
            // The patterns one after another; each starts at the default tempo unless it sets its own.
            var merged: [MIDIEvent] = []
            var offset = 0
            for track in out.tracks {
                if !track.events.contains(where: { $0.tick == 0 && $0.tempo != nil }) {
                    merged.append(tempoEvent(tick: offset, TempoMap.defaultTempo))
                }
                for event in track.events where !event.isEndOfTrack {
                    merged.append(MIDIEvent(tick: event.tick + offset, kind: event.kind))
                }
                offset += track.endTick
            }
            merged.append(MIDIEvent(tick: offset, kind: .meta(type: MIDIEvent.Meta.endOfTrack, data: [])))
            out = StandardMIDIFile(format: 0, division: out.division, tracks: [MIDITrack(events: merged)])
            changed = true
        }
        return changed ? out : nil
    }

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
    func url(for path: String, info: stat, file: StandardMIDIFile) throws -> URL? {
        guard let playable = Rendition.playable(file) else { return nil }
        let key = "\(path)\0\(info.st_size)\0\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let url = folder.appendingPathComponent(String(hash, radix: 16) + ".mid")
        if access(url.path, R_OK) != 0 {
            try AtomicFile.write(Data(SMFWriter.bytes(playable)), to: url)
        }
        return url
    }
}

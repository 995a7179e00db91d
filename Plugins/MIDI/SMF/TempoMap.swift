/// Turns ticks into seconds: tempo changes for musical time, a fixed rate for SMPTE time.
public struct TempoMap: Sendable, Equatable {
    /// Microseconds per quarter note before any Set Tempo event (120 beats per minute).
    public static let defaultTempo = 500_000

    private struct Segment: Sendable, Equatable {
        var tick: Int
        var seconds: Double
        var secondsPerTick: Double
    }
    private let segments: [Segment]

    /// The map of formats 0 and 1, where every track shares the tempo (Set Tempo events from any track count).
    public init(_ file: StandardMIDIFile) {
        self.init(division: file.division, tracks: file.tracks)
    }

    /// The map of some tracks played together (one pattern of a format 2 file).
    public init(division: StandardMIDIFile.Division, tracks: [MIDITrack]) {
        switch division {
        case .smpte:
            segments = [Segment(tick: 0, seconds: 0, secondsPerTick: 1 / (division.smpteTicksPerSecond ?? 1))]
        case .ticksPerQuarter(let ppq):
            var changes: [(tick: Int, tempo: Int)] = []
            for track in tracks {
                for event in track.events { if let tempo = event.tempo { changes.append((event.tick, tempo)) } }
            }
            // Stable: of two changes at one tick, the later one in the file wins.
            changes = changes.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
            var out = [Segment(tick: 0, seconds: 0, secondsPerTick: Double(Self.defaultTempo) / 1e6 / Double(ppq))]
            for change in changes {
                let last = out[out.count - 1]
                let seconds = last.seconds + Double(change.tick - last.tick) * last.secondsPerTick
                let perTick = Double(change.tempo > 0 ? change.tempo : Self.defaultTempo) / 1e6 / Double(ppq)
                if change.tick == last.tick { out[out.count - 1].secondsPerTick = perTick } else {
                    out.append(Segment(tick: change.tick, seconds: seconds, secondsPerTick: perTick))
                }
            }
            segments = out
        }
    }

    /// The time of `tick` from the start, in seconds.
    public func seconds(atTick tick: Int) -> Double {
        var low = 0
        var high = segments.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].tick <= tick { low = mid } else { high = mid - 1 }
        }
        let s = segments[low]
        return s.seconds + Double(tick - s.tick) * s.secondsPerTick
    }

    /// The tempo in effect at the start, in beats per minute (nil for SMPTE time).
    public func initialBPM(_ division: StandardMIDIFile.Division) -> Double? {
        guard case .ticksPerQuarter(let ppq) = division else { return nil }
        return 60 / (segments[0].secondsPerTick * Double(ppq))
    }
}

extension StandardMIDIFile {
    /// How long the file plays, in seconds: to the last End of Track of formats 0 and 1; the patterns one after
    /// another for format 2.
    public var duration: Double {
        if format == 2 {
            return tracks.reduce(0) { $0 + TempoMap(division: division, tracks: [$1]).seconds(atTick: $1.endTick) }
        }
        return TempoMap(self).seconds(atTick: tracks.map(\.endTick).max() ?? 0)
    }
}

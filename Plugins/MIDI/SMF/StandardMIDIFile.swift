/// A Standard MIDI File, parsed: the header and every track's events at absolute ticks.
public struct StandardMIDIFile: Sendable, Equatable {
    /// How ticks relate to time.
    public enum Division: Sendable, Equatable {
        /// Musical time: ticks per quarter note; the tempo map turns it into seconds.
        case ticksPerQuarter(Int)
        /// Absolute time: SMPTE frames per second (24, 25, 29 = 29.97 drop-frame, 30) and ticks per frame;
        /// tempo events do not apply.
        case smpte(framesPerSecond: Int, ticksPerFrame: Int)

        /// Ticks per second of an SMPTE division (29 means 29.97).
        public var smpteTicksPerSecond: Double? {
            guard case .smpte(let fps, let tpf) = self else { return nil }
            return (fps == 29 ? 29.97 : Double(fps)) * Double(tpf)
        }
    }

    /// 0: one track; 1: simultaneous tracks; 2: independent sequential patterns.
    public var format: Int
    public var division: Division
    public var tracks: [MIDITrack]

    public init(format: Int, division: Division, tracks: [MIDITrack]) {
        self.format = format
        self.division = division
        self.tracks = tracks
    }
}

/// One `MTrk` chunk.
public struct MIDITrack: Sendable, Equatable {
    /// In file order; ticks never decrease.
    public var events: [MIDIEvent]
    /// Whether the track ended with an End of Track meta event (files without one still play).
    public var hasEndOfTrack: Bool

    public init(events: [MIDIEvent], hasEndOfTrack: Bool = true) {
        self.events = events
        self.hasEndOfTrack = hasEndOfTrack
    }

    /// The tick of the last event (End of Track included): the track's length.
    public var endTick: Int { events.last?.tick ?? 0 }
}

/// One event of a track.
public struct MIDIEvent: Sendable, Equatable {
    public var tick: Int
    public var kind: Kind

    public enum Kind: Sendable, Equatable {
        /// A channel message: status (0x80–0xEF, channel in the low nibble) and one or two data bytes.
        case channel(status: UInt8, data: [UInt8])
        /// A system exclusive message: 0xF0 (complete or first packet) or 0xF7 (continuation / escape).
        case sysex(status: UInt8, data: [UInt8])
        /// A meta event (0xFF type data).
        case meta(type: UInt8, data: [UInt8])
    }

    public init(tick: Int, kind: Kind) {
        self.tick = tick
        self.kind = kind
    }

    /// Meta event types this module reads.
    public enum Meta {
        public static let text: UInt8 = 0x01
        public static let copyright: UInt8 = 0x02
        public static let trackName: UInt8 = 0x03
        public static let instrumentName: UInt8 = 0x04
        public static let lyric: UInt8 = 0x05
        public static let marker: UInt8 = 0x06
        public static let endOfTrack: UInt8 = 0x2F
        public static let tempo: UInt8 = 0x51
        public static let timeSignature: UInt8 = 0x58
        public static let keySignature: UInt8 = 0x59
    }

    /// Microseconds per quarter note, for a Set Tempo event.
    public var tempo: Int? {
        guard case .meta(Meta.tempo, let d) = kind, d.count >= 3 else { return nil }
        return Int(d[0]) << 16 | Int(d[1]) << 8 | Int(d[2])
    }

    public var isEndOfTrack: Bool {
        if case .meta(Meta.endOfTrack, _) = kind { return true }
        return false
    }
}

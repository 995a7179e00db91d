import Foundation

/// Builds Standard MIDI File bytes by hand, independently of the module's writer, so the reader is checked
/// against the format and not against itself.
public struct SMFBytes: Sendable {
    public var format: UInt16 = 1
    /// Raw division word (0x8000 bit set for SMPTE).
    public var division: UInt16 = 480
    public var tracks: [[UInt8]] = []
    /// Overrides the track count written in the header.
    public var announcedTracks: UInt16?

    public init(format: UInt16 = 1, division: UInt16 = 480, tracks: [[UInt8]] = [], announcedTracks: UInt16? = nil) {
        self.format = format
        self.division = division
        self.tracks = tracks
        self.announcedTracks = announcedTracks
    }

    public var bytes: [UInt8] {
        var out = Array("MThd".utf8) + be32(6) + be16(format) + be16(announcedTracks ?? UInt16(tracks.count)) + be16(division)
        for body in tracks { out += Array("MTrk".utf8) + be32(UInt32(body.count)) + body }
        return out
    }

    public func write(to url: URL) throws { try Data(bytes).write(to: url) }

    public static func smpte(fps: Int, ticksPerFrame: Int) -> UInt16 {
        UInt16(UInt8(bitPattern: Int8(-fps))) << 8 | UInt16(ticksPerFrame)
    }
}

/// Event bytes for a track body.
public enum Ev {
    public static func vlq(_ value: Int) -> [UInt8] {
        var v = value
        var out = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 { out.insert(UInt8(v & 0x7F) | 0x80, at: 0); v >>= 7 }
        return out
    }
    public static func meta(_ delta: Int, _ type: UInt8, _ data: [UInt8]) -> [UInt8] { vlq(delta) + [0xFF, type] + vlq(data.count) + data }
    public static func text(_ delta: Int, _ type: UInt8, _ s: String) -> [UInt8] { meta(delta, type, Array(s.utf8)) }
    public static func name(_ s: String) -> [UInt8] { text(0, 0x03, s) }
    public static func tempo(_ delta: Int, bpm: Double) -> [UInt8] {
        let us = Int((60_000_000 / bpm).rounded())
        return meta(delta, 0x51, [UInt8(us >> 16 & 0xFF), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)])
    }
    public static func end(_ delta: Int = 0) -> [UInt8] { meta(delta, 0x2F, []) }
    public static func program(_ delta: Int, channel: UInt8, _ program: UInt8) -> [UInt8] { vlq(delta) + [0xC0 | channel, program] }
    public static func on(_ delta: Int, channel: UInt8 = 0, _ key: UInt8, _ velocity: UInt8 = 100) -> [UInt8] { vlq(delta) + [0x90 | channel, key, velocity] }
    public static func off(_ delta: Int, channel: UInt8 = 0, _ key: UInt8) -> [UInt8] { vlq(delta) + [0x80 | channel, key, 0] }
    /// `count` notes of `ticks` each, written with running status (note-on velocity 0 as note-off).
    public static func notes(_ count: Int, ticks: Int, channel: UInt8 = 0, key: UInt8 = 60) -> [UInt8] {
        var out = vlq(0) + [0x90 | channel, key, 100]
        for i in 0..<count {
            if i > 0 { out += vlq(0) + [key, 100] }
            out += vlq(ticks) + [key, 0]
        }
        return out
    }
    public static func sysex(_ delta: Int, _ data: [UInt8]) -> [UInt8] { vlq(delta) + [0xF0] + vlq(data.count) + data }
}

public func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
public func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

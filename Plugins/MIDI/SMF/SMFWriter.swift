/// Writes Standard MIDI Files (no running status; every track closed by End of Track).
public enum SMFWriter {
    /// The bytes of `file`.
    public static func bytes(_ file: StandardMIDIFile) -> [UInt8] {
        var out: [UInt8] = Array("MThd".utf8)
        append32(6, to: &out)
        append16(file.format, to: &out)
        append16(file.tracks.count, to: &out)
        switch file.division {
        case .ticksPerQuarter(let ppq):
            append16(ppq & 0x7FFF, to: &out)
        case .smpte(let fps, let tpf):
            out.append(UInt8(bitPattern: Int8(-fps)))
            out.append(UInt8(tpf & 0xFF))
        }
        for track in file.tracks {
            var body: [UInt8] = []
            var last = 0
            for event in track.events where !event.isEndOfTrack {
                appendQuantity(max(0, event.tick - last), to: &body)
                last = max(last, event.tick)
                switch event.kind {
                case .channel(let status, let data):
                    body.append(status)
                    body.append(contentsOf: data)
                case .sysex(let status, let data):
                    body.append(status)
                    appendQuantity(data.count, to: &body)
                    body.append(contentsOf: data)
                case .meta(let type, let data):
                    body.append(contentsOf: [0xFF, type])
                    appendQuantity(data.count, to: &body)
                    body.append(contentsOf: data)
                }
            }
            appendQuantity(max(0, track.endTick - last), to: &body)
            body.append(contentsOf: [0xFF, MIDIEvent.Meta.endOfTrack, 0])
            out.append(contentsOf: "MTrk".utf8)
            append32(body.count, to: &out)
            out.append(contentsOf: body)
        }
        return out
    }

    static func appendQuantity(_ value: Int, to out: inout [UInt8]) {
        var v = min(value, 0x0FFF_FFFF)
        var groups: [UInt8] = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 {
            groups.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(contentsOf: groups.reversed())
    }

    static func append32(_ v: Int, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
    }

    static func append16(_ v: Int, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
    }
}

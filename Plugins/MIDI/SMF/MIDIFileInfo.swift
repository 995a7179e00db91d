import Foundation
import Lyrics

/// What a person wants to know about a MIDI file before playing it.
public struct MIDIFileInfo: Sendable, Equatable {
    /// The sequence or first track name; nil when the file names none (then show the file name).
    public var title: String?
    public var format: Int
    /// Seconds, from the tempo map.
    public var duration: Double
    public var trackCount: Int
    /// Channels that carry any channel message.
    public var channelCount: Int
    /// General MIDI names of the programs chosen, in order of first use, plus "Percussion" for channel 10.
    public var instruments: [String]
    /// Lyric events, or karaoke (.kar) text: whether `MIDILyrics` finds words.
    public var hasLyrics: Bool
    public var copyright: String?
    /// The first time signature ("3/4").
    public var timeSignature: String?
    /// The first key signature ("E♭ major").
    public var keySignature: String?
    /// The tempo at the start in beats per minute (nil with SMPTE time).
    public var initialBPM: Double?
    public var division: StandardMIDIFile.Division

    /// Summarises a parsed file; `karaoke` when it came with a .kar name (its text events are then lyrics).
    public init(_ file: StandardMIDIFile, karaoke: Bool = false) {
        format = file.format
        division = file.division
        trackCount = file.tracks.count
        duration = file.duration
        initialBPM = TempoMap(file).initialBPM(file.division)

        var title: String?
        var karaokeTitle: String?
        var copyright: String?
        var timeSignature: String?
        var keySignature: String?
        var channels = Set<UInt8>()
        var instruments: [String] = []
        for track in file.tracks {
            for event in track.events {
                switch event.kind {
                case .channel(let status, let data):
                    let channel = status & 0x0F
                    channels.insert(channel)
                    let name: String?
                    switch status & 0xF0 {
                    case 0xC0 where channel != 9: name = GeneralMIDI.instrument(data[0])
                    case 0x90 where channel == 9 && data.count == 2 && data[1] > 0: name = GeneralMIDI.percussion
                    default: name = nil
                    }
                    if let name, !instruments.contains(name) { instruments.append(name) }
                case .meta(let type, let data):
                    switch type {
                    case MIDIEvent.Meta.trackName where title == nil:
                        title = Self.text(data)
                    case MIDIEvent.Meta.copyright where copyright == nil:
                        copyright = Self.text(data)
                    case MIDIEvent.Meta.text:
                        if let text = Self.text(data), text.hasPrefix("@T"), karaokeTitle == nil,
                           let t = Self.text(Array(text.utf8.dropFirst(2))) {
                            karaokeTitle = t
                        }
                    case MIDIEvent.Meta.timeSignature where timeSignature == nil && data.count >= 2:
                        timeSignature = "\(data[0])/\(1 << min(Int(data[1]), 16))"
                    case MIDIEvent.Meta.keySignature where keySignature == nil && data.count >= 2:
                        keySignature = Self.key(Int8(bitPattern: data[0]), minor: data[1] == 1)
                    default:
                        break
                    }
                case .sysex:
                    break
                }
            }
        }
        self.title = title ?? karaokeTitle
        self.copyright = copyright
        self.timeSignature = timeSignature
        self.keySignature = keySignature
        self.channelCount = channels.count
        self.instruments = instruments
        self.hasLyrics = MIDILyrics.extract(file, karaoke: karaoke) != nil
    }

    /// Meta event text: UTF-8 when valid, else Windows-1252 (what older files use); trimmed; nil when empty.
    static func text(_ bytes: [UInt8]) -> String? {
        let raw = LegacyText.decode(bytes)
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
        return trimmed.isEmpty ? nil : trimmed
    }

    static func key(_ sharps: Int8, minor: Bool) -> String? {
        guard (-7...7).contains(sharps) else { return nil }
        let majors = ["C♭", "G♭", "D♭", "A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯"]
        let minors = ["A♭", "E♭", "B♭", "F", "C", "G", "D", "A", "E", "B", "F♯", "C♯", "G♯", "D♯", "A♯"]
        let index = Int(sharps) + 7
        return minor ? minors[index] + " minor" : majors[index] + " major"
    }
}

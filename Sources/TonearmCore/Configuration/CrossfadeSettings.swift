import Foundation
import Playback

/// `[playback.crossfade]`: how tracks overlap, and which joins stay gapless.
public struct CrossfadeSettings: Sendable, Equatable {
    /// Whether consecutive tracks of one album played in order fade too.
    public enum Albums: String, Sendable, CaseIterable, Codable {
        /// They join to the sample (a live album, a DJ mix, a symphony stay whole); anything else fades.
        case gapless
        /// Every join fades.
        case fade
    }

    /// How long tracks overlap, in seconds; 0 turns crossfade off.
    public var seconds = 0.0
    public var curve: FadeCurve = .equalPower
    /// The fade when Next, Previous or a jump cuts a playing track, in seconds (0: a plain cut).
    public var onSkip = 0.5
    public var albums: Albums = .gapless
    /// Below this level (dBFS) the end of a track counts as silence and is skipped before the fade (the MixRamp idea,
    /// measured from the audio).
    public var silenceThreshold = CrossfadeFormat.defaultSilenceThreshold

    public static let secondsRange: ClosedRange<Double> = 0...CrossfadeFormat.maximumSeconds
    public static let onSkipRange: ClosedRange<Double> = 0...5
    public static let silenceRange: ClosedRange<Double> = -96...0

    /// Off: 0 s, equal-power, 0.5 s on a skip, albums gapless, silence below -50 dBFS.
    public init() {}

    /// Whether crossfade is on.
    public var isOn: Bool { seconds > 0 }

    /// The fade into `next` when it follows `previous` in play order, or nil to join them to the sample: off, or
    /// (albums gapless) the next track of the same album.
    public func transition(from previous: TrackMetadata?, to next: TrackMetadata) -> Crossfade? {
        guard isOn else { return nil }
        if albums == .gapless, let previous, Self.continuesAlbum(previous, with: next) { return nil }
        return Crossfade(seconds: seconds, curve: curve)
    }

    /// Whether `next` is the track after `previous` on the same album: same album title and album artist, and the
    /// following track number (or the first of the following disc); without track numbers, the same album is enough.
    public static func continuesAlbum(_ previous: TrackMetadata, with next: TrackMetadata) -> Bool {
        guard let album = previous.album?.lowercased(), !album.isEmpty, next.album?.lowercased() == album,
              previous.albumArtists.first?.lowercased() == next.albumArtists.first?.lowercased() else { return false }
        guard let a = previous.trackNumber, let b = next.trackNumber else { return true }
        let discA = previous.discNumber ?? 1, discB = next.discNumber ?? 1
        return (discA == discB && b == a + 1) || (discB == discA + 1 && b == 1)
    }
}

extension CrossfadeSettings {
    static let keys = ["seconds", "curve", "on-skip", "albums", "silence-threshold"]

    /// Reads the `[playback.crossfade]` table; errors name the key and the fix.
    public init(section table: [String: ConfigValue], origin: String) throws {
        let section = try ConfigSection("\(origin): [playback.crossfade]", table, known: Self.keys)
        self.init()
        seconds = try section.number("seconds", seconds, Self.secondsRange)
        curve = try section.choice("curve", curve)
        onSkip = try section.number("on-skip", onSkip, Self.onSkipRange)
        albums = try section.choice("albums", albums)
        silenceThreshold = try section.number("silence-threshold", silenceThreshold, Self.silenceRange)
    }

    /// The settings as TOML lines of `[playback.crossfade]`, each with where it came from.
    func describe(source: (String) -> Configuration.Source) -> [String] {
        values.map { "\($0.key) = \($0.value)  # \(source($0.key).rawValue)" }
    }

    /// The keys with their values, in the order the README lists them.
    public var values: [(key: String, value: ConfigValue)] {
        [("seconds", .double(seconds)), ("curve", .string(curve.rawValue)), ("on-skip", .double(onSkip)),
         ("albums", .string(albums.rawValue)), ("silence-threshold", .double(silenceThreshold))]
    }
}

import Foundation

/// Today's pick: one track chosen for the day, the same all day, never one heard in the 30 days before it, and
/// weighted by rating (an unrated track as if rated 2.5 stars).
public enum TodaysPick {
    /// How long a track must have gone unheard to be picked.
    public static let unheardFor: TimeInterval = 30 * 86_400

    /// Today as the pick names days (local time).
    public static func today(_ now: Date = Date()) -> String { DateText.localDay(now) }

    /// Picks one of `candidates` (each with its rating in half stars) for `day`: the same list and day give the same
    /// track.
    public static func choose<T>(_ candidates: [(T, Int?)], day: String) -> T? {
        guard !candidates.isEmpty else { return nil }
        let weights = candidates.map { 1 + UInt64(min(10, max(0, $0.1 ?? 5))) }
        let total = weights.reduce(0, +)
        var generator = SeededGenerator(seed: fnv1a(day))
        var ticket = generator.next() % total
        for (candidate, weight) in zip(candidates, weights) {
            if ticket < weight { return candidate.0 }
            ticket -= weight
        }
        return candidates.last?.0
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// SplitMix64: a few lines, and the same numbers on every machine (Swift's own generator is seeded at random).
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}

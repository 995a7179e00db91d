import Testing
@testable import TonearmCore

@Suite struct TodaysPickTests {
    @Test func theSameDayGivesTheSameTrackAndDaysDiffer() {
        let tracks = (0..<50).map { ("track \($0)", Int?.none) }
        let day = TodaysPick.choose(tracks, day: "2026-11-27")
        #expect(day == TodaysPick.choose(tracks, day: "2026-11-27"))
        let picks = Set((1...28).map { TodaysPick.choose(tracks, day: "2026-02-\($0 < 10 ? "0" : "")\($0)")! })
        #expect(picks.count > 10, "\(picks.count) different picks in 28 days")
        #expect(TodaysPick.choose([(String, Int?)](), day: "2026-11-27") == nil)
    }

    @Test func aBetterRatingIsPickedMoreOften() {
        let tracks: [(String, Int?)] = [("loved", 10), ("unrated", nil), ("disliked", 0)]
        var counts: [String: Int] = [:]
        for d in 0..<3000 { counts[TodaysPick.choose(tracks, day: "day \(d)")!, default: 0] += 1 }
        // Weights 11, 6 and 1.
        #expect(counts["loved", default: 0] > counts["unrated", default: 0])
        #expect(counts["unrated", default: 0] > 3 * counts["disliked", default: 0])
        #expect(counts["disliked", default: 0] > 0)
    }
}

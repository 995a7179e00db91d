import Testing
import TonearmCore

/// The `.smart` rules format, read by table: what each file means, and for each wrong one the line and the reason.
@Suite struct SmartRulesParserTests {
    static let good: [(String, SmartRules)] = [
        ("", SmartRules()),
        ("# only a comment\n\n", SmartRules()),
        ("rating gt 3.5", SmartRules(conditions: SmartGroup(.all, [.rule(SmartRule(.rating, .gt, .number(3.5)))]))),
        ("match any\ngenre is Jazz\nGENRE contains \"  blues \"\n",
         SmartRules(conditions: SmartGroup(.any, [.rule(SmartRule(.genre, .is, .text("Jazz"))),
                                                  .rule(SmartRule(.genre, .contains, .text("  blues ")))]))),
        ("artist is Miles Davis\r\nalbumArtist startsWith The\r\n",
         SmartRules(conditions: SmartGroup(.all, [.rule(SmartRule(.artist, .is, .text("Miles Davis"))),
                                                  .rule(SmartRule(.albumArtist, .startsWith, .text("The")))]))),
        ("title is \"say \\\"hi\\\"\"", SmartRules(conditions: SmartGroup(.all, [.rule(SmartRule(.title, .is, .text("say \"hi\"")))]))),
        ("lastPlayed notInTheLast 30 days\nadded inTheLast 2w\nfirstPlayed gt 2026-01-31\nlastplayed lt 2025-12-01",
         SmartRules(conditions: SmartGroup(.all, [
            .rule(SmartRule(.lastPlayed, .notInTheLast, .span(30 * 86_400))), .rule(SmartRule(.added, .inTheLast, .span(14 * 86_400))),
            .rule(SmartRule(.firstPlayed, .gt, .day(year: 2026, month: 1, day: 31))),
            .rule(SmartRule(.lastPlayed, .lt, .day(year: 2025, month: 12, day: 1))),
         ]))),
        ("length gt 5:00\nlength lt 1:02:03\nduration is 90\nplays > 2\nskips = 0\nyear != 1999\nformat is FLAC",
         SmartRules(conditions: SmartGroup(.all, [
            .rule(SmartRule(.length, .gt, .number(300))), .rule(SmartRule(.length, .lt, .number(3723))),
            .rule(SmartRule(.length, .is, .number(90))), .rule(SmartRule(.playCount, .gt, .number(2))),
            .rule(SmartRule(.skipCount, .is, .number(0))), .rule(SmartRule(.year, .isNot, .number(1999))),
            .rule(SmartRule(.format, .is, .text("FLAC"))),
         ]))),
        // Nested groups by indentation, back out to the top level after them.
        ("rating gt 3\nany\n  genre is Jazz\n  all\n    artist contains davis\n    year lt 1970\n  genre is Blues\nplaycount lt 10",
         SmartRules(conditions: SmartGroup(.all, [
            .rule(SmartRule(.rating, .gt, .number(3))),
            .group(SmartGroup(.any, [
                .rule(SmartRule(.genre, .is, .text("Jazz"))),
                .group(SmartGroup(.all, [.rule(SmartRule(.artist, .contains, .text("davis"))), .rule(SmartRule(.year, .lt, .number(1970)))])),
                .rule(SmartRule(.genre, .is, .text("Blues"))),
            ])),
            .rule(SmartRule(.playCount, .lt, .number(10))),
         ]))),
        ("sort rating desc, lastPlayed, title ascending\nlimit 50",
         SmartRules(sort: [SmartSort(.rating, descending: true), SmartSort(.lastPlayed), SmartSort(.title)], limit: .tracks(50))),
        ("sort random\nlimit 2 hours", SmartRules(random: true, limit: .seconds(7200))),
        ("limit 90 minutes", SmartRules(limit: .seconds(5400))),
    ]

    @Test(arguments: 0..<good.count) func readsWhatItMeans(_ i: Int) throws {
        let (text, expected) = Self.good[i]
        #expect(try SmartRulesParser.parse(text) == expected, "\(text)")
    }

    static let bad: [(String, line: Int, reason: String)] = [
        ("ratin gt 3", 1, "unknown field 'ratin'"),
        ("\nrating", 2, "needs an operator"),
        ("rating contains 3", 1, "'contains' does not apply to rating"),
        ("rating above 3", 1, "unknown operator 'above'"),
        ("rating gt", 1, "needs a value"),
        ("rating gt 6", 1, "0 to 5 stars"),
        ("rating gt 2.3", 1, "half stars"),
        ("year gt nineteen", 1, "takes a number"),
        ("playcount gt 1.5", 1, "whole number"),
        ("length gt 5:7", 1, "m:ss"),
        ("lastPlayed inTheLast soon", 1, "takes a span"),
        ("lastPlayed inTheLast 3 fortnights", 1, "takes a span"),
        ("added gt 2026-02-30", 1, "2026-01-31"),
        ("added is 2026-01-01", 1, "'is' does not apply to added"),
        ("title is \"open", 1, "closing quote"),
        ("title is \"a\" b", 1, "nothing may follow"),
        ("genre is Jazz\nmatch any", 2, "first line"),
        ("match some", 1, "'match' takes all or any"),
        ("any genre is Jazz", 1, "stands alone"),
        ("rating gt 3\nany\nplaycount gt 1", 2, "no conditions"),
        ("sort loudness", 1, "cannot sort by 'loudness'"),
        ("sort rating up", 1, "asc or desc"),
        ("sort title\nsort artist", 2, "once"),
        ("limit many", 1, "limit 50"),
        ("limit 2.5", 1, "limit 50"),
        ("limit 3 days", 1, "limit 50"),
        ("  sort title", 1, "unindented"),
    ]

    @Test(arguments: 0..<bad.count) func refusesWithTheLineAndTheReason(_ i: Int) {
        let (text, line, reason) = Self.bad[i]
        #expect {
            _ = try SmartRulesParser.parse(text)
        } throws: { error in
            guard let e = error as? SmartRulesError else { return false }
            return e.line == line && e.reason.contains(reason) && "\(e)".hasPrefix("line \(line): ")
        }
    }
}

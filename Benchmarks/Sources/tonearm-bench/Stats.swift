import Foundation

enum Stats {
    /// Nearest-rank percentile (`p` in 0...1) of unsorted samples.
    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        precondition(!samples.isEmpty)
        let sorted = samples.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The median (the mean of the two middle values for an even count).
    static func median(_ samples: [Double]) -> Double {
        precondition(!samples.isEmpty)
        let s = samples.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}

extension Duration {
    var microseconds: Double {
        let (s, atto) = components
        return Double(s) * 1e6 + Double(atto) / 1e12
    }
}

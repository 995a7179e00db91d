import Foundation

/// Times as UPnP AV writes them: `H+:MM:SS[.F+]` (also `H+:MM:SS.F0/F1`), and `NOT_IMPLEMENTED` where unknown.
public enum UPnPTime {
    /// Microseconds as `H:MM:SS` (the renderers' usual form; fractions are left out as most controllers show none).
    public static func text(_ microseconds: Int64?) -> String {
        guard let microseconds, microseconds >= 0 else { return "0:00:00" }
        let seconds = microseconds / 1_000_000
        let (h, m, s) = (seconds / 3600, (seconds / 60) % 60, seconds % 60)
        return "\(h):\(m < 10 ? "0" : "")\(m):\(s < 10 ? "0" : "")\(s)"
    }

    /// The microseconds a time text says, or nil when it is not one; `-` in front is accepted for relative seeks.
    public static func microseconds(_ text: String) -> Int64? {
        var body = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        var sign: Int64 = 1
        if body.first == "-" { sign = -1; body = body.dropFirst() } else if body.first == "+" { body = body.dropFirst() }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        var whole: Int64 = 0
        for (i, part) in parts.dropLast().enumerated() {
            // Minutes after hours stay under 60; the leading field may be as large as it likes.
            guard part.count <= 9, let n = Int64(part), n >= 0, i == 0 || n < 60 else { return nil }
            whole = whole * 60 + n
        }
        // The seconds, with an optional fraction: ".5" or the ".F0/F1" form.
        let last = parts[parts.count - 1]
        let pieces = last.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let secondsText = pieces.first, secondsText.count <= 9, let s = Int64(secondsText), s >= 0 else { return nil }
        if parts.count > 1, s >= 60 { return nil }
        var fraction: Int64 = 0
        if pieces.count == 2 {
            let f = pieces[1]
            if let slash = f.firstIndex(of: "/") {
                guard let num = Int64(f[..<slash]), let den = Int64(f[f.index(after: slash)...]), den > 0, num >= 0, num < den else { return nil }
                fraction = num * 1_000_000 / den
            } else {
                guard !f.isEmpty, f.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                let digits = String(f.prefix(6)).padding(toLength: 6, withPad: "0", startingAt: 0)
                fraction = Int64(digits) ?? 0
            }
        }
        let total = (whole * 60 + s)
        guard total < 1_000_000_000 else { return nil }
        return sign * (total * 1_000_000 + fraction)
    }
}

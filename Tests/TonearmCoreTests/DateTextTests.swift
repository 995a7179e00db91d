import Foundation
import Testing
import TonearmCore

/// Dates written by hand agree with Foundation's formatters, which the daemon no longer loads.
@Suite struct DateTextTests {
    @Test func iso8601UTCIsWhatFoundationWrites() {
        #expect(DateText.iso8601UTC(Date(timeIntervalSince1970: 1_764_000_000)) == "2025-11-24T16:00:00Z")
        #expect(DateText.iso8601UTC(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        // Fractions are cut, not rounded, as ISO8601DateFormatter cuts them.
        #expect(DateText.iso8601UTC(Date(timeIntervalSince1970: 59.999)) == "1970-01-01T00:00:59Z")
        let foundation = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: Double(UInt32.random(in: 0...UInt32.max, using: &generator)))
            #expect(DateText.iso8601UTC(date) == foundation.string(from: date))
        }
    }

    @Test func httpDateIsIMFFixdate() {
        #expect(DateText.httpDate(Date(timeIntervalSince1970: 1_764_000_000)) == "Mon, 24 Nov 2025 16:00:00 GMT")
        #expect(DateText.httpDate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(DateText.httpDate(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func localDayIsTheLocalCalendarDay() {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd"
        for seconds in stride(from: 0.0, to: 4_000_000_000, by: 86_400 * 37 + 3_601) {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(DateText.localDay(date) == f.string(from: date))
        }
    }
}

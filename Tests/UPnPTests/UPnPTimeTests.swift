import Testing
@testable import UPnP

@Suite struct UPnPTimeTests {
    @Test(arguments: [
        ("0:00:00", Int64(0)), ("0:01:05", 65_000_000), ("1:00:00.5", 3_600_500_000), ("00:00:10.250", 10_250_000),
        ("12:34", 754_000_000), ("7", 7_000_000), ("0:00:01.1/4", 1_250_000), ("-0:00:05", -5_000_000), ("100:00:00", 360_000_000_000),
    ])
    func reads(_ text: String, _ micros: Int64) {
        #expect(UPnPTime.microseconds(text) == micros)
    }

    @Test(arguments: ["", "abc", "0:60:00", "1:2:3:4", "0:00:1x", "0:00:01.", "0:00:01.5/0", "::", "NOT_IMPLEMENTED", "99999999999:00:00"])
    func refuses(_ text: String) {
        #expect(UPnPTime.microseconds(text) == nil)
    }

    @Test func writes() {
        #expect(UPnPTime.text(0) == "0:00:00")
        #expect(UPnPTime.text(65_900_000) == "0:01:05")
        #expect(UPnPTime.text(3_725_000_000) == "1:02:05")
        #expect(UPnPTime.text(nil) == "0:00:00")
    }
}

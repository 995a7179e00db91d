import Foundation
import Testing
@testable import Web

/// The web face's one JSON writer: every string comes back as it went in, escaped or not.
@Suite struct JSONTests {
    @Test(arguments: ["", "plain ASCII", "Grüße, 音楽 🎵", "a \"quoted\" word", "back\\slash", "line\nbreak\r\ttab",
                      "\u{01}control\u{1f}", "ends with a quote\""])
    func aStringReadsBackAsWritten(_ text: String) throws {
        let written: JSON = ["text": .string(text), "list": [.string(text), 1, true, nil]]
        let read = try #require(try JSONSerialization.jsonObject(with: Data(written.bytes)) as? [String: Any])
        #expect(read["text"] as? String == text)
        #expect((read["list"] as? [Any])?.first as? String == text)
    }

    @Test func numbersAreWholeOrToTheMicrosecond() {
        let written: JSON = [.double(3), .double(1.5), .double(0.1234567), .int(-42), .double(.nan)]
        #expect(written.text == "[3,1.5,0.123457,-42,null]")
    }
}

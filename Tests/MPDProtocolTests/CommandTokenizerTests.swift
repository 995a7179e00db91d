import MPDProtocol
import Testing

@Suite struct CommandTokenizerTests {
    @Test(arguments: [
        ("status", "status", [String]()),
        ("  play 3 ", "play", ["3"]),
        ("add \"My Music/a b.flac\"", "add", ["My Music/a b.flac"]),
        ("find \"(Artist == \\\"O\\\\'Brien\\\")\"", "find", ["(Artist == \"O\\'Brien\")"]),
        ("find artist 'x y'", "find", ["artist", "x y"]),
        ("search any \"\"", "search", ["any", ""]),
        ("seekcur +5\r", "seekcur", ["+5"]),
        ("lsinfo \"é ü\"", "lsinfo", ["é ü"]),
    ])
    func tokenizes(line: String, name: String, arguments: [String]) throws {
        let (n, a) = try CommandTokenizer.tokenize(line)
        #expect(n == name)
        #expect(a == arguments)
    }

    @Test(arguments: [
        ("", "ACK [5@0] {} No command given\n"),
        ("   ", "ACK [5@0] {} No command given\n"),
        ("bogus\"x", "ACK [5@0] {} unknown command \"bogus\"x\"\n"),
        ("9lives", "ACK [5@0] {} unknown command \"9lives\"\n"),
        ("add \"unterminated", "ACK [2@0] {add} Missing closing '\"'\n"),
        ("add \"a\"b", "ACK [2@0] {add} Space expected after closing '\"'\n"),
        ("add a\"b", "ACK [2@0] {add} Invalid unquoted character\n"),
    ])
    func refuses(line: String, ack: String) {
        #expect(throws: MPDAck.self) { try CommandTokenizer.tokenize(line) }
        do { _ = try CommandTokenizer.tokenize(line) } catch { #expect(error.line == ack) }
    }

    @Test func quotesRoundTrip() throws {
        for value in ["plain", "with space", "q\"uote", "back\\slash", ""] {
            let (_, a) = try CommandTokenizer.tokenize("add " + CommandTokenizer.quote(value))
            #expect(a == [value])
        }
    }
}

import Testing
import TonearmCore

@Suite struct MPDProtocolSettingsTests {
    @Test func defaultsAreOffOnLoopback() throws {
        let c = try Configuration.parse("")
        #expect(c.mpdProtocol.enabled == false)
        #expect(c.mpdProtocol.address == "127.0.0.1")
        #expect(c.mpdProtocol.port == 6600)
        #expect(c.mpdProtocol.connectionTimeout == 60)
    }

    @Test func readsTheSection() throws {
        let c = try Configuration.parse("[mpd-protocol]\nenabled = true\naddress = \"::\"\nport = 0\npassword = \"x\"\nunix-socket = \"/run/s\"\nconnection-timeout = 5\n")
        #expect(c.mpdProtocol.enabled && c.mpdProtocol.address == "::" && c.mpdProtocol.port == 0)
        #expect(c.mpdProtocol.password == "x" && c.mpdProtocol.unixSocket == "/run/s" && c.mpdProtocol.connectionTimeout == 5)
        #expect(c.describe().contains("[mpd-protocol]"))
        #expect(!c.describe().contains("password = \"x\""), "the password is not printed")
    }

    @Test(arguments: [
        ("enabled = 1", "enabled must be true or false"),
        ("address = \"localhost:6600\"", "address must be an IP address"),
        ("port = 70000", "port must be a whole number from 0 to 65535"),
        ("password = \"\"", "password must be a non-empty string"),
        ("unix-socket = \"rel/path\"", "unix-socket must be an absolute path"),
        ("connection-timeout = 0", "connection-timeout must be a whole number from 1 to 86400"),
        ("connection-timeout = \"60\"", "connection-timeout must be a whole number from 1 to 86400"),
        ("bogus = 1", "[mpd-protocol] has no key \"bogus\""),
    ])
    func refusesBadValues(line: String, message: String) {
        do {
            _ = try Configuration.parse("[mpd-protocol]\n\(line)\n")
            Issue.record("accepted \(line)")
        } catch {
            #expect((error as? TonearmError)?.message.contains(message) == true, "\(error)")
        }
    }
}

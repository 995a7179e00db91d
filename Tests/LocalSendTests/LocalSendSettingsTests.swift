import LocalSend
import Testing
import TonearmCore

@Suite struct LocalSendSettingsTests {
    @Test func defaultsAreSafe() throws {
        let s = try LocalSendSettings(section: [:], hostName: "desk.example")
        #expect(!s.enabled && s.https && s.discovery && s.port == 53317 && s.alias == "Tonearm on desk")
        #expect(s.policy.mode == .ask && s.policy.pin == nil && s.policy.maxFileBytes == 2048 << 20 && s.policy.stallSeconds == 30)
    }

    @Test func readsEveryKey() throws {
        let s = try LocalSendSettings(section: [
            "enabled": .bool(true), "alias": .string("Kitchen"), "port": .int(5000), "protocol": .string("http"), "discovery": .bool(false),
            "accept": .string("pin"), "pin": .int(1234), "max-file-mb": .double(0.5), "max-session-mb": .int(10), "max-files": .int(3),
            "stall-seconds": .int(5), "ask-seconds": .int(9), "address": .string("127.0.0.1"),
        ])
        #expect(s.enabled && s.alias == "Kitchen" && s.port == 5000 && !s.https && !s.discovery && s.address == "127.0.0.1")
        #expect(s.policy == LocalSendMachine.Policy(mode: .pin, pin: "1234", maxFileBytes: 1 << 19, maxSessionBytes: 10 << 20, maxFiles: 3,
                                                     stallSeconds: 5, askSeconds: 9))
    }

    @Test(arguments: [
        (["accept": ConfigValue.string("sometimes")], "accept must be one of \"ask\", \"pin\", \"paired\", \"open\""),
        (["accept": .string("pin")], "needs a pin"),
        (["protocol": .string("ftp")], "protocol must be \"https\" or \"http\""),
        (["port": .int(70000)], "port must be a number from 0 to 65535, not 70000"),
        (["enabled": .string("yes")], "enabled must be true or false"),
        (["stall-seconds": .int(0)], "stall-seconds must be a number"),
        (["pinn": .string("1")], "has no key \"pinn\""),
    ])
    func clearErrors(section: [String: ConfigValue], message: String) {
        do {
            _ = try LocalSendSettings(section: section)
            Issue.record("accepted \(section)")
        } catch {
            #expect(error.name == "org.tonearm.Error.InvalidConfig" || error.message.contains(message), "\(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}

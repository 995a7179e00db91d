import DaemonHarness
import Foundation
import TestSupport
import Testing

/// tonearmd reads the command lines a start uses by hand (ArgumentParser's reflection cost 3 ms of every start) and
/// leaves the rest to ArgumentParser: every form of the same options means the same, and what only ArgumentParser
/// reads (help, mistakes) is still explained by it.
@Suite struct DaemonCommandLineTests {
    static var tonearmd: String { Daemon.binDirectory.appendingPathComponent("tonearmd").path }

    /// `--print-config --json` with `arguments`, in a HOME of its own (no config file: every value a default or the
    /// command line's).
    static func effective(_ arguments: [String], in home: TemporaryDirectory) async throws -> (out: String, err: String, status: Int32) {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.url.path
        environment["XDG_CONFIG_HOME"] = home.file("config").path
        return try await runProcess(tonearmd, arguments, environment: environment)
    }

    @Test func everyFormOfTheSameOptionsGivesTheSameSettings() async throws {
        let home = TemporaryDirectory("tonearmd-arguments")
        let forms: [[String]] = [
            // Read by hand: options apart from their values, options with `=`, flags in any order, files among them.
            ["--print-config", "--json", "--audio-sink", "fakesink sync=true", "--tick-interval", "0.5", "--web-port", "0"],
            ["--json", "--audio-sink=fakesink sync=true", "--tick-interval=0.5", "--print-config", "--web-port=0", "song.ogg"],
            ["--web-port", "0", "--print-config", "--tick-interval", "0.5", "--json", "--audio-sink", "fakesink sync=true", "--", "-odd.ogg"],
            // Read by ArgumentParser (an option given twice): the last value counts.
            ["--print-config", "--json", "--audio-sink", "alsasink", "--audio-sink", "fakesink sync=true", "--tick-interval", "0.5",
             "--web-port", "0"],
        ]
        var outputs: [String] = []
        for form in forms {
            let run = try await Self.effective(form, in: home)
            #expect(run.status == 0, "\(form): \(run.err)")
            outputs.append(run.out)
        }
        let settings = try #require(try JSONSerialization.jsonObject(with: Data(outputs[0].utf8)) as? [String: Any])
        let text = outputs[0]
        #expect(text.contains("fakesink sync=true") && text.contains("0.5"), "\(settings)")
        #expect(Set(outputs).count == 1, "the forms disagree:\n\(outputs.joined(separator: "\n---\n"))")
    }

    @Test func whatOnlyArgumentParserReadsIsStillExplained() async throws {
        let home = TemporaryDirectory("tonearmd-arguments")
        let help = try await Self.effective(["--help"], in: home)
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: tonearmd") && help.out.contains("--audio-sink"), "\(help.out)")
        // A value that is not a number, an option with no value, an unknown option, a flag given a value: status 64
        // and ArgumentParser's word for it.
        for (arguments, words) in [(["--tick-interval", "banana"], "'banana' is invalid"), (["--audio-sink"], "Missing value"),
                                   (["--shuffle"], "Unknown option"), (["--verbose=yes"], "verbose")] {
            let run = try await Self.effective(arguments, in: home)
            #expect(run.status == 64, "\(arguments): \(run.status) \(run.err)")
            #expect(run.err.contains(words), "\(arguments): \(run.err)")
        }
        // A value read by hand that the settings refuse: status 2 and the setting's own word, as when ArgumentParser
        // read it.
        for arguments in [["--print-config", "--web-port", "70000"], ["--print-config", "--web-port", "70000", "--web-port", "70000"]] {
            let run = try await Self.effective(arguments, in: home)
            #expect(run.status == 2, "\(arguments): \(run.err)")
            #expect(run.err.contains("--web-port must be 0 to 65535"), "\(arguments): \(run.err)")
        }
    }
}

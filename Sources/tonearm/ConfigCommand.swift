import ArgumentParser
import Foundation

/// `tonearm config`: the settings tonearmd would use, each with where it came from.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration, with where each value came from.",
        discussion: """
            Reads $XDG_CONFIG_HOME/tonearm/config.toml (or --file) as tonearmd does and prints every \
            setting, plugin sections included, as TOML with a comment saying "default", "file" or \
            "file (unknown key, ignored)". --json prints {"file", "settings": [{"section", "key", \
            "value", "source"}]}. An invalid file is an error naming the line (exit code 2).
            """
    )

    @Option(help: "Another config file.") var file: String?
    @OptionGroup var output: JSONOption

    func run() async throws {
        var arguments = ["--print-config"]
        if let file { arguments += ["--config", file] }
        if output.json { arguments.append("--json") }
        let (out, status) = try Subprocess.run(try Subprocess.daemon(), arguments)
        guard status == 0 else { throw CLIFailure.badArgument("the configuration is not valid (see above)") }
        Output.out(out)
    }
}

/// `tonearm doctor`: what stands between this machine and music, each with the fix.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that everything Tonearm needs is here, and say how to fix what is not.",
        discussion: """
            Checks the session bus, whether the daemon runs, the config, the GStreamer plugins, the \
            SoundFont, the audio output and the folders. Exit code 1 when something fails. --json \
            prints [{"name", "verdict" (ok, warning, failure), "detail", "fix"}].
            """
    )

    @OptionGroup var output: JSONOption

    struct Check {
        var name: String
        var verdict: String
        var detail: String
        var fix: String?
    }

    func run() async throws {
        var checks: [Check] = []
        do {
            let client = try PlayerClient.connect()
            checks.append(Check(name: "session bus", verdict: "ok", detail: "reachable"))
            if try await client.isDaemonRunning() {
                checks.append(Check(name: "daemon", verdict: "ok", detail: "tonearmd owns \(PlayerClient.busName)"))
            } else {
                checks.append(Check(name: "daemon", verdict: "warning", detail: "tonearmd is not running",
                                    fix: "tonearm play (or a media key, once installed with D-Bus activation) starts it"))
            }
        } catch let failure as CLIFailure {
            checks.append(Check(name: "session bus", verdict: "failure", detail: failure.message,
                                fix: "run inside a desktop session, or export DBUS_SESSION_BUS_ADDRESS (tonearmd prints one when it starts its own bus)"))
        }
        let (out, _) = try Subprocess.run(try Subprocess.daemon(), ["--doctor"], quietly: true)
        let items = (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [[String: String]] ?? []
        if items.isEmpty { checks.append(Check(name: "tonearmd", verdict: "failure", detail: "tonearmd --doctor gave no answer")) }
        for item in items {
            checks.append(Check(name: item["name"] ?? "?", verdict: item["verdict"] ?? "failure", detail: item["detail"] ?? "", fix: item["fix"]))
        }
        if output.json {
            Output.line(JSONValue.array(checks.map { c in
                .object([("name", .string(c.name)), ("verdict", .string(c.verdict)), ("detail", .string(c.detail)), ("fix", .string(c.fix))])
            }).serialized)
        } else {
            for c in checks {
                let mark = c.verdict == "ok" ? Style.accent("✓") : c.verdict == "warning" ? Style.warning("!") : Style.error("✗")
                Output.line("\(mark) \(c.name): \(c.detail)")
                if let fix = c.fix, c.verdict != "ok" { Output.line("    fix: \(fix)") }
            }
        }
        if checks.contains(where: { $0.verdict == "failure" }) {
            throw CLIFailure(message: "some checks failed", code: ExitStatus.daemonError)
        }
    }
}

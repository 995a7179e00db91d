import ArgumentParser
import DBus
import Foundation

/// `tonearm web`: where the web remote is, to open in a browser (and a QR code for a phone).
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Print the address of the web remote.",
        discussion: """
            The daemon serves a remote at this address ([web] in config.toml; on 127.0.0.1:6680 unless set \
            otherwise). When it listens beyond this computer (address = "0.0.0.0", with a password), a QR \
            code for a phone follows (needs qrencode). --json prints {"address", "network"}.
            """
    )

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let address = try await client.tonearmProperty("WebAddress").looseString ?? ""
        guard !address.isEmpty else {
            throw CLIFailure.refused("the web remote is off ([web] enabled = false in config.toml) or not listening yet")
        }
        let host = URL(string: address)?.host ?? ""
        let network = !(host.hasPrefix("127.") || host == "::1" || host == "[::1]" || host == "localhost")
        if output.json {
            Output.line(JSONValue.object([("address", .string(address)), ("network", .bool(network))]).serialized)
            return
        }
        Output.line(address)
        guard network else { return }
        let qrencode = ["/usr/bin/qrencode", "/usr/local/bin/qrencode"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if let qrencode, let (code, status) = try? Subprocess.run(qrencode, ["-t", "UTF8", "-m", "2", address], quietly: true), status == 0 {
            Output.line(code)
        } else {
            Output.line("(install qrencode for a QR code to scan with a phone)")
        }
    }
}

import ArgumentParser
import DBus

/// `tonearm output [NAME]`: lists the outputs, or switches to one while playing.
struct OutputCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "output",
        abstract: "List the audio outputs, or switch to one.",
        discussion: """
            With no argument, lists the outputs from config.toml ([outputs.NAME]: local, snapcast-pipe, \
            snapcast-tcp, pipeline; "default" is audio-sink), the current one marked with *, and why it \
            takes no audio when it does not. With NAME, switches to it: what plays goes on from the same \
            position after a short gap. An output that cannot be opened (snapserver not running, a FIFO \
            nobody reads) is an error and playback stays where it was. --json prints {"current", "error", \
            "outputs": [{"name", "kind", "detail"}]}.

            Examples: tonearm output, tonearm output kitchen, tonearm output default
            """
    )

    @Argument(help: ArgumentHelp("The output to switch to.", valueName: "name"))
    var name: String?

    @OptionGroup var output: JSONOption

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        if let name {
            try await client.setTonearmProperty("Output", .string(name))
        }
        let current = try await client.tonearmProperty("Output").looseString ?? ""
        let problem = try await client.tonearmProperty("OutputError").looseString ?? ""
        let outputs: [(name: String, kind: String, detail: String)] = (try await client.tonearmProperty("Outputs").arrayValue ?? []).compactMap { item in
            guard case .structure(let fields) = item.unwrapped, fields.count == 3, let name = fields[0].looseString,
                  let kind = fields[1].looseString, let detail = fields[2].looseString else { return nil }
            return (name, kind, detail)
        }
        if output.json {
            let list = outputs.map { JSONValue.object([("name", .string($0.name)), ("kind", .string($0.kind)), ("detail", .string($0.detail))]) }
            Output.line(JSONValue.object([("current", .string(current)), ("error", .string(problem)), ("outputs", .array(list))]).serialized)
            return
        }
        if name != nil {
            Output.line("output: \(current)")
        } else {
            let width = outputs.map(\.name.count).max() ?? 0
            for o in outputs {
                let padded = o.name + String(repeating: " ", count: width - o.name.count)
                Output.line("\(o.name == current ? "*" : " ") \(padded)  \(o.kind)  \(o.detail)")
            }
        }
        if !problem.isEmpty { Output.line("error: \(problem)") }
    }
}

import Foundation
import Playback

/// The named outputs (`[outputs.NAME]`), the one to start on (`output`), and how a lost one is reconnected
/// (`output-retries`, `output-retry-interval`).
public struct OutputSettings: Sendable, Equatable {
    /// The `[outputs.NAME]` sections, by name.
    public var named: [AudioOutput] = []
    /// The top-level `output`: the one to start on; nil for the `audio-sink` output, named "default".
    public var start: String?
    /// How a lost output is reconnected.
    public var recovery = OutputRecoveryPolicy()

    public init() {}

    /// The name of the output the `audio-sink` setting describes.
    public static let defaultName = "default"

    /// Every output the player can switch to: "default" (the `audio-sink` line) unless a section takes that name,
    /// then the named ones in name order.
    public func all(audioSink: String) -> [AudioOutput] {
        let named = named.sorted { $0.name < $1.name }
        guard !named.contains(where: { $0.name == Self.defaultName }) else { return named }
        return [AudioOutput.sink(audioSink, name: Self.defaultName)] + named
    }

    /// The output to start on: the `audio-sink` one when it was given on the command line, else the one last switched
    /// to live (while it is configured and `output` is as it was then), else `output`, else "default".
    public func startOutput(audioSink: String, sinkFromCommandLine: Bool, saved: SavedOutput? = nil) -> AudioOutput {
        let outputs = all(audioSink: audioSink)
        if sinkFromCommandLine { return AudioOutput.sink(audioSink, name: Self.defaultName) }
        if let saved, saved.configured == start, let output = outputs.first(where: { $0.name == saved.name }) { return output }
        let name = start ?? Self.defaultName
        return outputs.first { $0.name == name } ?? AudioOutput.sink(audioSink, name: Self.defaultName)
    }

    static let kinds = ["local", "snapcast-pipe", "snapcast-tcp", "pipeline"]

    /// snapserver's port for a `tcp://…?mode=server` source when none is given.
    public static let snapcastTCPPort = 4953

    /// The keys each kind takes besides `kind`.
    static let keysByKind: [String: [String]] = [
        "local": ["device", "element"], "snapcast-pipe": ["path", "sample-format"],
        "snapcast-tcp": ["host", "port", "sample-format"], "pipeline": ["sink"],
    ]

    /// One `[outputs.NAME]` section.
    static func parse(name: String, _ table: [String: ConfigValue], origin: String) throws -> AudioOutput {
        let place = "\(origin): [outputs.\(name)]"
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw TonearmError(.invalidConfig, "\(place): an output's name must be a word without spaces or slashes")
        }
        let kinds = Self.kinds.map { "\"\($0)\"" }.joined(separator: ", ")
        guard table["kind"] != nil else { throw TonearmError(.invalidConfig, "\(place) needs kind = one of \(kinds)") }
        let kind = try ConfigSection(place, table, known: Array(table.keys)).string("kind") ?? ""
        guard let keys = keysByKind[kind] else {
            throw TonearmError(.invalidConfig, "\(place) kind must be one of \(kinds), not \"\(kind)\"")
        }
        let section = try ConfigSection("\(place) (kind \"\(kind)\")", table, known: ["kind"] + keys)
        func format() throws -> AudioOutput.SampleFormat {
            guard let text = try section.string("sample-format") else { return AudioOutput.SampleFormat() }
            guard let format = AudioOutput.SampleFormat(text) else {
                throw section.fail("sample-format", "RATE:16:CHANNELS as in snapserver's source (e.g. \"48000:16:2\"); Tonearm writes 16-bit samples")
            }
            return format
        }
        switch kind {
        case "local":
            return AudioOutput(name: name, kind: .local(device: try section.string("device"), element: try section.string("element")))
        case "snapcast-pipe":
            guard let path = try section.string("path"), path.hasPrefix("/") else {
                throw section.fail("path", "the absolute path of snapserver's FIFO (its source = pipe:///tmp/snapfifo?name=…)")
            }
            return AudioOutput(name: name, kind: .snapcastPipe(path: path, format: try format()))
        case "snapcast-tcp":
            // snapserver's tcp source listens on 4953 by default.
            let port = try section.integer("port", snapcastTCPPort, 1...65535)
            return AudioOutput(name: name, kind: .snapcastTCP(host: try section.string("host", "127.0.0.1"), port: port, format: try format()))
        default:
            guard let sink = try section.string("sink") else {
                throw TonearmError(.invalidConfig, "\(place) needs sink = a GStreamer sink line such as \"pulsesink\"")
            }
            return AudioOutput(name: name, kind: .pipeline(sink))
        }
    }

    /// The keys of an output's section, as the config would give them.
    public static func values(of output: AudioOutput) -> [(String, ConfigValue)] {
        var values: [(String, ConfigValue)] = [("kind", .string(output.kindName))]
        switch output.kind {
        case .local(let device, let element):
            if let device { values.append(("device", .string(device))) }
            if let element { values.append(("element", .string(element))) }
        case .snapcastPipe(let path, let format):
            values += [("path", .string(path)), ("sample-format", .string(format.description))]
        case .snapcastTCP(let host, let port, let format):
            values += [("host", .string(host)), ("port", .int(port)), ("sample-format", .string(format.description))]
        case .pipeline(let sink):
            values.append(("sink", .string(sink)))
        }
        return values
    }

    /// The `[outputs.NAME]` sections as TOML lines.
    func describe() -> [String] {
        named.sorted { $0.name < $1.name }.flatMap { output in
            ["\n[outputs.\(output.name)]"] + Self.values(of: output).map { "\($0.0) = \($0.1)  # file" }
        }
    }
}

/// How a lost output (snapserver gone) is reconnected: `attempts` tries, `interval` apart, then a clear error.
public struct OutputRecoveryPolicy: Sendable, Equatable {
    public var attempts: Int
    public var interval: Duration

    public init(attempts: Int = 60, interval: Duration = .seconds(1)) {
        self.attempts = attempts
        self.interval = interval
    }
}

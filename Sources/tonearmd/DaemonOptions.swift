/// What the daemon is asked on its command line.
struct DaemonOptions: Equatable, Sendable {
    var files: [String] = []
    var audioSink: String?
    var config: String?
    var tickInterval: Double?
    var webPort: Int?
    var verbose = false
    var printConfig = false
    var doctor = false
    var json = false
    var measureLoudness = false
}

extension DaemonOptions {
    /// The options of a command line in the forms a start uses, read by hand; nil for anything else (help, an unknown,
    /// repeated or valueless option, a value that does not parse), which ArgumentParser then reads and explains.
    /// ArgumentParser's own parse reflects over the command: about 3 ms of every start, most of it the Swift runtime
    /// looking up protocol conformances among the binary's 11,700.
    init?(fastParsing arguments: [String]) {
        var seen: Set<String> = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                files += arguments[index...]
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                files.append(argument)
                continue
            }
            let (written, attached) = Self.split(argument)
            // -v and --verbose are one flag: both given is a repeat.
            let name = written == "-v" ? "--verbose" : written
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "--verbose", "--print-config", "--doctor", "--json", "--measure-loudness":
                guard attached == nil else { return nil }
                switch name {
                case "--verbose": verbose = true
                case "--print-config": printConfig = true
                case "--doctor": doctor = true
                case "--json": json = true
                default: measureLoudness = true
                }
            case "--audio-sink", "--config", "--tick-interval", "--web-port":
                let value: String
                if let attached {
                    value = attached
                } else {
                    guard index < arguments.endIndex, !arguments[index].hasPrefix("-") else { return nil }
                    value = arguments[index]
                    index += 1
                }
                switch name {
                case "--audio-sink": audioSink = value
                case "--config": config = value
                case "--tick-interval":
                    guard let seconds = Double(value) else { return nil }
                    tickInterval = seconds
                default:
                    guard let port = Int(value) else { return nil }
                    webPort = port
                }
            default:
                return nil
            }
        }
    }

    /// `--name=value` as its name and value; anything else as itself and nil.
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}

import ArgumentParser

/// Where the daemon starts: the command line's usual forms are read by hand (`DaemonOptions(fastParsing:)`), the rest
/// by ArgumentParser, which prints help and explains a mistake.
@main
enum TonearmdEntry {
    static func main() async {
        guard let options = DaemonOptions(fastParsing: Array(CommandLine.arguments.dropFirst())) else {
            await Tonearmd.main()
            return
        }
        do {
            try await options.run()
        } catch {
            Tonearmd.exit(withError: error)
        }
    }
}

import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon starts: the command line's usual forms are read by hand (`DaemonOptions(fastParsing:)`), the rest
/// by ArgumentParser, which prints help and explains a mistake.
///
/// The entry is synchronous: the daemon runs as a task on the global executor while the main thread waits. An
/// `async` main ends its thread in `dispatch_main`, whose `pthread_exit` unwinds that thread's stack: it loads
/// libgcc_s and reads the executable's unwind tables, which a start whose executable left the page cache then reads
/// from the disk (Benchmarks/README.md, *What a start reads, laid out together*). Nothing runs on the main actor.
@main
enum TonearmdEntry {
    static func main() {
        Task.detached {
            await run()
            exit(0)
        }
        while true { pause() }
    }

    private static func run() async {
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

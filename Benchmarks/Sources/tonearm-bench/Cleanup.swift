import Foundation
import Synchronization
import TestSupport

/// Makes sure nothing the bench started outlives it: players (spawned as `ChildProcess`es in process groups of
/// their own) and temporary folders, at exit and on SIGINT/SIGTERM/SIGHUP.
enum Cleanup {
    /// At exit, and on SIGINT/SIGTERM/SIGHUP (handled on a dispatch queue, then exit, so PrivateBus's own exit
    /// handler stops the buses too).
    static func install() {
        atexit {
            ChildProcess.killAll()
            Leftovers.removeAll()
        }
        signalSources = [SIGINT, SIGTERM, SIGHUP].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                ChildProcess.killAll()
                exit(128 + sig)
            }
            source.resume()
            return source
        }
    }

    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
}

/// Temporary folders to remove should the bench exit without unwinding (on SIGINT, say): the
/// sessions' HOMEs, the private buses' folders, the generated media.
enum Leftovers {
    private static let paths = Mutex<Set<String>>([])
    static func add(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    static func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }
    static func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import DaemonHarness
import Foundation
import TestSupport

/// The real daemon in a network namespace of its own (`unshare -rn`: only loopback, multicast on it and a 224.0.0.0/4
/// route; scripts/netns-tonearmd), and other programs run in the same namespace with `nsenter`: what the LocalSend
/// and UPnP tests send stays on the namespace's loopback.
enum NetworkNamespace {
    /// The checkout (where scripts/ is).
    static let root: URL = {
        var root = Daemon.binDirectory
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path), root.path != "/" {
            root = root.deletingLastPathComponent()
        }
        return root
    }()

    /// Makes `d` start inside a namespace of its own.
    static func isolate(_ d: Daemon) {
        d.extraEnvironment["TONEARM_NETNS_DAEMON"] = Daemon.binDirectory.appendingPathComponent("tonearmd").path
        d.daemonExecutable = root.appendingPathComponent("scripts/netns-tonearmd").path
    }

    /// Runs a program in the started daemon's namespace.
    static func run(in d: Daemon, _ program: String, _ arguments: [String], environment: [String: String]) async throws
        -> (out: String, err: String, status: Int32) {
        try await runProcess("/usr/bin/nsenter", ["-t", String(d.process!.pid), "-n", "--", program] + arguments, environment: environment)
    }

    /// Starts a long-running program in the daemon's namespace, its output into `log` in the daemon's home; the
    /// caller ends it.
    static func spawn(in d: Daemon, _ program: String, _ arguments: [String], log: String, environment: [String: String]) throws -> ChildProcess {
        try ChildProcess("/usr/bin/nsenter", ["-t", String(d.process!.pid), "-n", "--", program] + arguments,
                         environment: environment, captureOutput: false, outputFile: d.home.file(log).path)
    }
}

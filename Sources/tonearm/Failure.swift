import DBus

/// The exit codes of `tonearm`, the same for every subcommand.
enum ExitStatus {
    /// Done.
    static let ok: Int32 = 0
    /// The daemon answered with a D-Bus error (or refused the request).
    static let daemonError: Int32 = 1
    /// A bad argument: nothing was sent.
    static let badArgument: Int32 = 2
    /// No session bus, or the daemon is not running / not answering.
    static let unreachable: Int32 = 3
}

/// An error the command-line client reports itself: printed as `error: <message>`
/// on standard error, then `tonearm` exits with `code`.
struct CLIFailure: Error, Sendable {
    var message: String
    var code: Int32

    static func badArgument(_ message: String) -> CLIFailure {
        CLIFailure(message: message, code: ExitStatus.badArgument)
    }

    static func unreachable(_ message: String) -> CLIFailure {
        CLIFailure(message: message, code: ExitStatus.unreachable)
    }

    static func refused(_ message: String) -> CLIFailure {
        CLIFailure(message: message, code: ExitStatus.daemonError)
    }
}

extension DBusError {
    /// Errors that mean "nobody answered" rather than "the daemon said no".
    private static let unreachableNames: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply",
        "org.freedesktop.DBus.Error.Timeout",
        "org.freedesktop.DBus.Error.TimedOut",
        "org.freedesktop.DBus.Error.Disconnected",
        "org.freedesktop.DBus.Error.NoServer",
        "org.freedesktop.DBus.Error.NoNetwork",
        "org.freedesktop.DBus.Error.FileNotFound",
        "org.freedesktop.DBus.Error.BadAddress",
    ]

    /// True when the error says the daemon (or the bus) could not be reached.
    var meansUnreachable: Bool {
        Self.unreachableNames.contains(name) || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    /// How the client reports this error.
    var cliFailure: CLIFailure {
        if meansUnreachable {
            return .unreachable("the Tonearm daemon is not reachable: \(message) (\(name))")
        }
        return .refused("\(message) (\(name))")
    }
}

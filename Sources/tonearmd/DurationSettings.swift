import Foundation

extension Duration {
    /// A duration given in seconds (a decimal) by the environment variable `name`: the tests' short intervals and
    /// deadlines; nil when it is unset or not a number.
    static func seconds(fromEnvironment name: String) -> Duration? {
        ProcessInfo.processInfo.environment[name].flatMap(Double.init).map { .milliseconds(Int($0 * 1000)) }
    }

    /// This duration in whole milliseconds (negative ones as 0).
    var wholeMilliseconds: Int {
        max(0, Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000))
    }
}

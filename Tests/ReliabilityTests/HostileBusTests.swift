import DaemonHarness
import DBus
import Foundation
import TestSupport
import Testing

/// Part 1: a seeded fuzzer calls every method and property of every exported interface with good, wrong-typed,
/// empty, huge and malformed arguments, and unknown members; the daemon must answer each with the right reply
/// or error, stay up, and not grow.
@Suite(.serialized, .timeLimit(.minutes(20))) struct HostileBusTests {
    /// What a call tried.
    enum Kind: String, CaseIterable { case valid, wrongType = "wrong type", empty, huge, extra = "extra argument", unknownMethod = "unknown method",
                                        unknownInterface = "unknown interface", getProperty = "Get", setProperty = "Set", unknownProperty = "unknown property" }

    struct Fuzzer {
        var random: SeededGenerator
        let interfaces: [DBusInterfaceDescription]
        let strings: [String]
        var paths: [String]

        mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        mutating func chance(_ p: Double) -> Bool { Double(random.next() % 10_000) / 10_000 < p }

        /// The complete single types of a signature ("sa{sv}(ii)" → ["s", "a{sv}", "(ii)"]).
        static func types(_ signature: String) -> [String] {
            var out: [String] = []
            var i = signature.startIndex
            while i < signature.endIndex {
                let end = completeType(signature, from: i)
                out.append(String(signature[i..<end]))
                i = end
            }
            return out
        }

        static func completeType(_ s: String, from i: String.Index) -> String.Index {
            switch s[i] {
            case "a": return completeType(s, from: s.index(after: i))
            case "(", "{":
                var depth = 0
                var j = i
                repeat {
                    if s[j] == "(" || s[j] == "{" { depth += 1 }
                    if s[j] == ")" || s[j] == "}" { depth -= 1 }
                    j = s.index(after: j)
                } while depth > 0 && j < s.endIndex
                return j
            default: return s.index(after: i)
            }
        }

        /// A value of `type`, from pools of interesting values; `huge` makes a 1 MB string or a 100,000-element array.
        mutating func value(_ type: String, huge: Bool = false) -> DBusValue {
            let first = type.first!
            switch first {
            case "y": return .byte(UInt8(truncatingIfNeeded: random.next()))
            case "b": return .bool(chance(0.5))
            case "n": return .int16(Int16(truncatingIfNeeded: random.next()))
            case "q": return .uint16(UInt16(truncatingIfNeeded: random.next()))
            case "i": return .int32(pick([0, 1, -1, Int32.max, Int32.min, Int32(truncatingIfNeeded: random.next())]))
            case "u": return .uint32(pick([0, 1, UInt32.max, UInt32(truncatingIfNeeded: random.next())]))
            case "x": return .int64(pick([0, 1, -1, 1_000_000, -10_000_000, Int64.max, Int64.min, Int64(truncatingIfNeeded: random.next())]))
            case "t": return .uint64(pick([0, 1, UInt64.max, random.next()]))
            case "d": return .double(pick([0, 1, -1, 0.5, 100, 1e308, -1e308, .nan, .infinity, -.infinity, Double(random.next() % 1000) / 7]))
            case "s": return .string(huge ? String(repeating: "x", count: 1 << 20) : pick(strings))
            case "o": return .objectPath(pick(paths))
            case "g": return .signature(pick(["", "s", "a{sv}", "(ii)"]))
            case "v":
                let inner = pick(["s", "i", "d", "b", "x", "as", "a{sv}", "o"])
                return .variant(value(inner))
            case "a":
                let element = String(type.dropFirst())
                let count = huge ? 100_000 : Int(random.next() % 4)
                if element.first == "{" {
                    let inner = Self.types(String(element.dropFirst().dropLast()))
                    return .dictionary(key: inner[0], value: inner[1], (0..<min(count, huge ? 100_000 : 4)).map { _ in
                        DBusDictEntry(key: value(inner[0]), value: value(inner[1]))
                    })
                }
                if huge && element == "s" { return .array(element: element, (0..<count).map { _ in .string("x") }) }
                return .array(element: element, (0..<count).map { _ in value(element) })
            case "(":
                return .structure(Self.types(String(type.dropFirst().dropLast())).map { value($0) })
            default:
                return .string("?")
            }
        }

        /// A type that is not `type` (for wrong-typed calls).
        mutating func otherType(than type: String) -> String {
            pick(["s", "i", "d", "b", "x", "as", "a{sv}", "o", "(ss)", "v", "y"].filter { $0 != type })
        }
    }

    struct Outcome {
        var counts: [Kind: (ok: Int, expectedError: Int, unexpected: Int)] = [:]
        var unexpected: [String] = []
        var errorNames: [String: Int] = [:]
    }

    /// TONEARM_RELIABILITY_KINDS="valid,huge" replays only some kinds (to find what a failure needs).
    static let kinds: [Kind] = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY_KINDS"].map {
        $0.split(separator: ",").compactMap { Kind(rawValue: String($0)) }
    } ?? Kind.allCases

    static let standardErrors = ["InvalidArgs", "UnknownMethod", "UnknownInterface", "UnknownProperty", "PropertyReadOnly", "NotSupported", "UnknownObject"]
        .map { "org.freedesktop.DBus.Error." + $0 }

    /// Resident memory with the daemon in the same state before and after the calls: the same queue, stopped, at rate 1. Taken
    /// while playing, it depended on where playback was (a call may have set the rate to 4, and a gapless hand-over
    /// holds two decoders), which moved it by more than the 10% it is held to (a loaded run: +10.3% from 60 MB).
    static func quiescentMemory(_ d: Daemon, _ pid: pid_t, _ media: [String]) async throws -> Reliability.Resident {
        try await d.set(Daemon.player, "Rate", .double(1))
        // Settings the calls may have changed, back to the start's: crossfade's delay line and the equalizer's elements
        // are state, not a leak.
        try await d.set(Daemon.tonearm, "Crossfade", .double(0))
        try await d.set(Daemon.tonearm, "Equalizer", .string("off"))
        _ = try await d.call(Daemon.tonearm, "ReplaceQueue", [.stringArray(media), .bool(false)])
        _ = try await d.call(Daemon.player, "Stop")
        try await d.waitFor("Stopped") { try await d.status() == "Stopped" }
        // The daemon gives freed memory back to the system at each pass of its trimmer (every second here): two passes
        // after the stop, whatever the stop itself freed late is handed back too.
        await letTimePass(.seconds(3), because: "two passes of the daemon's malloc_trim, which nothing announces")
        return await Reliability.settledResident(pid)
    }

    @Test func tenThousandHostileCallsLeaveTheDaemonUpAndLean() async throws {
        let calls = Reliability.size(1500, 10_000)
        let d = try Daemon()
        // malloc_trim every second instead of every 10 s, so that a measure never catches memory freed a moment before
        // and not yet handed back: the test looks for a leak, not for where glibc's next trim falls.
        d.extraEnvironment["TONEARM_MEMORY_TRIM_INTERVAL"] = "1"
        let songs = try (0..<3).map { try d.sine("song\($0).wav", seconds: 30) }
        let exportFolder = d.media.url.appendingPathComponent("exports")
        try FileManager.default.createDirectory(at: exportFolder, withIntermediateDirectories: true)
        if let env = ProcessInfo.processInfo.environment["TONEARM_RELIABILITY_DAEMON_ENV"] {
            for pair in env.split(separator: " ") { let kv = pair.split(separator: "=", maxSplits: 1); d.extraEnvironment[String(kv[0])] = String(kv[1]) }
        }
        try await d.start(songs)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        let pid = try #require(d.process?.pid)

        let xml = try #require(try await d.client.call(destination: Daemon.busName, path: Daemon.path,
                                                          interface: "org.freedesktop.DBus.Introspectable", member: "Introspect").first?.stringValue)
        let interfaces = try DBusInterfaceDescription.parse(xml: xml).filter { $0.name != "org.freedesktop.DBus.Peer" }
        #expect(interfaces.count >= 8, "\(interfaces.map(\.name))")
        let media = songs.map { URL(fileURLWithPath: $0).absoluteString }
        var fuzzer = Fuzzer(random: SeededGenerator(seed: Reliability.seed), interfaces: interfaces,
                            strings: ["", "a", "library", "midi", "..", "../../etc", "/etc/passwd", "Classical/../..", "passthrough", "ogg",
                                      "None", "Track", "Playlist", "title~a", "artist=x AND album^y", "ÿ€😀\u{1}", String(repeating: "é", count: 300),
                                      exportFolder.path, "http://localhost:1/x.ogg", "nosuchscheme:x", "file:///nonexistent.ogg"] + media + songs,
                            paths: ["/", "/org/mpris/MediaPlayer2/TrackList/NoTrack", "/org/tonearm/track/1", "/org/tonearm/track/999999", "/a/b"])

        // The audio path's own high-water marks too: crossfade's delay line at its longest (15 s + 6 s of audio) and the
        // equalizer's elements, both of which the calls below may turn on; "before" and "after" are then both read with
        // them off again (quiescentMemory).
        try await d.set(Daemon.tonearm, "Crossfade", .double(15))
        try await d.set(Daemon.tonearm, "Equalizer", .string("bass"))
        await letTimePass(.seconds(8), because: "the delay line fills at four times real time, which nothing announces")

        var outcome = Outcome()
        let warmUp = 1000 // reaches the high-water marks (big messages, caches) before "before" is taken
        var before = Reliability.Resident(total: 0, anonymous: 0)
        for n in 0..<(calls + warmUp) {
            if n == warmUp {
                before = try await Self.quiescentMemory(d, pid, media)
                _ = try await d.call(Daemon.player, "Play")
                outcome = Outcome()
            }
            if n % 200 == 0 { fuzzer.paths += (try? await d.tracks()) ?? [] }
            let kind = fuzzer.pick(Self.kinds.filter { $0 != .huge || n % 25 == 0 || Self.kinds == [.huge] })
            let interface = fuzzer.pick(interfaces)
            var member = ""
            var iface: String? = interface.name
            var args: [DBusValue] = []
            switch kind {
            case .valid, .wrongType, .empty, .huge, .extra, .unknownMethod:
                let methods = interface.methods.filter { !["Quit"].contains($0.name) }
                guard let method = methods.isEmpty ? nil : fuzzer.pick(methods) else { continue }
                member = method.name
                let types = Fuzzer.types(method.inSignature)
                switch kind {
                case .valid: args = types.map { fuzzer.value($0) }
                case .huge: args = types.map { fuzzer.value($0, huge: true) }
                case .empty: args = []
                case .extra: args = types.map { fuzzer.value($0) } + [.string("extra")]
                case .wrongType:
                    guard !types.isEmpty else { args = [.int32(7)]; break }
                    let slot = Int(fuzzer.random.next() % UInt64(types.count))
                    args = types.enumerated().map { i, t in i == slot ? fuzzer.value(fuzzer.otherType(than: t)) : fuzzer.value(t) }
                default: member = "NoSuchMethod\(n % 7)"
                }
                // Exports write files: keep every folder argument inside the test's own folder.
                if interface.name == "org.tonearm.Shares1", member == "Export", args.count == 3, case .string = args[1] {
                    args[1] = .string(fuzzer.chance(0.5) ? exportFolder.path : "relative/folder")
                }
            case .unknownInterface:
                iface = "org.example.NoSuchInterface\(n % 3)"
                member = "Anything"
            case .getProperty, .setProperty, .unknownProperty:
                iface = "org.freedesktop.DBus.Properties"
                let property = interface.properties.isEmpty ? nil : fuzzer.pick(interface.properties)
                let name = kind == .unknownProperty || property == nil ? "NoSuchProperty" : property!.name
                if kind == .setProperty {
                    member = "Set"
                    let type = property.map { fuzzer.chance(0.5) ? $0.type : fuzzer.otherType(than: $0.type) } ?? "s"
                    args = [.string(interface.name), .string(name), .variant(fuzzer.value(type))]
                } else {
                    member = "Get"
                    args = [.string(interface.name), .string(name)]
                }
            }
            if interface.name == "org.freedesktop.DBus.Properties" || interface.name == "org.freedesktop.DBus.Introspectable" {
                if kind == .valid && member == "Set" { continue } // covered by the Set kind
            }
            // With no arguments to give, an empty call is a valid one.
            let mayWork = [.valid, .huge, .getProperty, .setProperty].contains(kind) || (kind == .empty && args.isEmpty && member != ""
                && interface.methods.first { $0.name == member }?.inSignature.isEmpty == true)
            var entry = outcome.counts[kind] ?? (0, 0, 0)
            do {
                _ = try await d.client.call(destination: Daemon.busName, path: Daemon.path, interface: iface, member: member,
                                            arguments: args, timeout: .seconds(20))
                if mayWork {
                    entry.ok += 1
                } else {
                    entry.unexpected += 1
                    outcome.unexpected.append("\(kind.rawValue): \(iface ?? "").\(member) succeeded")
                }
            } catch let error as DBusError {
                outcome.errorNames[error.name, default: 0] += 1
                let fine = error.name.hasPrefix("org.tonearm.Error.") || Self.standardErrors.contains(error.name)
                if fine { entry.expectedError += 1 } else {
                    entry.unexpected += 1
                    if outcome.unexpected.count < 40 { outcome.unexpected.append("\(kind.rawValue): \(iface ?? "").\(member) → \(error.name): \(error.message.prefix(200))") }
                }
            }
            outcome.counts[kind] = entry
            guard d.process?.isRunning == true else {
                Issue.record("the daemon died after \(kind.rawValue) \(iface ?? "").\(member)(\(args.map(\.signature).joined()))\n\(d.log.suffix(3000))")
                return
            }
        }
        // The queue grew by every valid Enqueue and AddTrack: that is state, not a leak. Back to the same queue.
        let queueLength = (try? await d.tracks().count) ?? 0
        let after = try await Self.quiescentMemory(d, pid, media)
        let alive = try await d.client.nameHasOwner(Daemon.busName)
        let answering = (try? await d.status()) != nil
        // A leak grows the anonymous memory; the executable's pages grow as calls first run code, up to its size. The
        // growth is held to a tenth of the whole RSS, as before the split: a tenth of the anonymous part alone (10 MB
        // after a trim) is within what glibc's arenas keep between two trims under load (2.7 MB seen).
        let growth = before.total > 0 ? Double(after.anonymous - before.anonymous) / Double(before.total) : 0
        #expect(alive && answering, "the daemon must still own its name and answer")
        #expect(outcome.unexpected.isEmpty, "unexpected replies:\n\(outcome.unexpected.joined(separator: "\n"))")
        #expect(growth < 0.10, "anonymous memory grew by \(Int(growth * 100))% of the RSS (\(before.anonymous) → \(after.anonymous) kB; RSS \(before.total) → \(after.total) kB)")

        let total = outcome.counts.values.reduce(0) { $0 + $1.ok + $1.expectedError + $1.unexpected }
        Reliability.report(1, "Hostile D-Bus", tried: [
            "\(total) seeded calls (after \(warmUp) warm-up calls) to \(interfaces.count) interfaces found by Introspect, every method and property: "
                + Kind.allCases.map { k in "\(k.rawValue) \(outcome.counts[k].map { $0.ok + $0.expectedError + $0.unexpected } ?? 0)" }.joined(separator: ", "),
            "huge: 1 MB strings and 100,000-element arrays; wrong type: one argument of another type; Set with right and wrong variant types",
            "the daemon played a queue of three files meanwhile; Quit was left out (it ends the daemon by design)",
        ], held: [
            "the daemon never died and still owned its name and answered afterwards: \(alive && answering ? "yes" : "NO")",
            "every reply was a success or an expected error (org.tonearm.Error.* or a standard D-Bus error): \(outcome.unexpected.isEmpty ? "yes" : "NO, \(outcome.unexpected.count) unexpected")",
            "anonymous memory grown by less than 10% of the RSS before: \(growth < 0.10 ? "yes" : "NO")",
        ], figures: [("calls", "\(total)"), ("queue length before it was reset", "\(queueLength)"), ("RSS before (kB)", "\(before.total)"), ("RSS after (kB)", "\(after.total)"), ("anonymous before (kB)", "\(before.anonymous)"), ("anonymous after (kB)", "\(after.anonymous)"),
                     ("anonymous growth, % of the RSS before", String(format: "%.1f%%", growth * 100))]
            + outcome.errorNames.sorted { $0.value > $1.value }.prefix(12).map { ("replies \($0.key)", "\($0.value)") })
    }
}

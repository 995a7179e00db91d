import Foundation

/// One client's conversation as a value: request lines and idle events in, actions out. It frames command lists,
/// holds `idle`, queues lines that arrive while a command runs, and enforces the list size limit; the commands
/// themselves run elsewhere (`execute`) and come back through `completed`. No I/O: the connection handler performs
/// the actions.
public struct MPDSession: Sendable {
    /// How a batch of commands reports success.
    public enum ListMode: Sendable, Equatable {
        /// One command outside a list.
        case single
        /// `command_list_begin`: one OK at the end.
        case list
        /// `command_list_ok_begin`: `list_OK` after each command, then OK.
        case listOK
    }

    /// What the connection must do.
    public enum Action: Sendable, Equatable {
        /// Run these request lines in order (the connection calls `completed` afterwards).
        case execute([String], ListMode)
        case send([UInt8])
        /// Close the connection once what was sent has left.
        case close
    }

    enum State: Sendable, Equatable {
        case ready
        case collecting(lines: [String], bytes: Int, mode: ListMode)
        case executing
        case idle(Set<IdleSubsystem>)
        case closed
    }

    /// The most bytes a command list may hold (mpd's `max_command_list_size` default, 2 MiB).
    public let maximumListBytes: Int
    /// The most lines kept while a command runs; beyond it the client is dropped (the connection also stops reading).
    public let maximumQueuedLines: Int
    private(set) var state: State = .ready
    /// Events since the client last heard of them (mpd keeps them between `idle` calls).
    private(set) var pending: Set<IdleSubsystem> = []
    private var queued: [String] = []
    /// A password is set and the client has not given it: `idle` is refused (the executor gates the rest).
    public var locked = false

    public init(maximumListBytes: Int = 2 << 20, maximumQueuedLines: Int = 4096) {
        self.maximumListBytes = maximumListBytes
        self.maximumQueuedLines = maximumQueuedLines
    }

    /// Whether a batch is running (the connection reads no more meanwhile).
    public var isExecuting: Bool { state == .executing }
    /// Whether the next line starts a new command (no list being collected, no batch running, not idle).
    public var isReady: Bool { state == .ready }
    public var isClosed: Bool { state == .closed }
    public var isIdle: Bool { if case .idle = state { true } else { false } }

    /// A request line (without its newline).
    public mutating func receive(_ line: String) -> [Action] {
        switch state {
        case .closed:
            return []
        case .executing:
            guard queued.count < maximumQueuedLines else { return closeNow() }
            queued.append(line)
            return []
        case .idle:
            // While idle only `noidle` may come; anything else is a protocol error and ends the connection, as in mpd.
            guard Self.trimmed(line) == "noidle" else { return closeNow() }
            state = .ready
            return [.send(Array("OK\n".utf8))]
        case .collecting(var lines, let bytes, let mode):
            if Self.trimmed(line) == "command_list_end" {
                state = .executing
                return [.execute(lines, mode)]
            }
            let total = bytes + line.utf8.count + 1
            guard total <= maximumListBytes else { return closeNow() }
            // The state lets go of the lines first, so appending does not copy them all (a list of 10,000 `add`s
            // was quadratic).
            state = .ready
            lines.append(line)
            state = .collecting(lines: lines, bytes: total, mode: mode)
            return []
        case .ready:
            return start(line)
        }
    }

    /// The batch ended: its reply, and whether the client asked to close (`close`) or must be dropped.
    public mutating func completed(reply: [UInt8], close: Bool) -> [Action] {
        guard state == .executing else { return [] }
        state = .ready
        let actions: [Action] = reply.isEmpty ? [] : [.send(reply)]
        if close { return actions + closeNow() }
        return actions + drain()
    }

    /// The client sent nothing for the connection timeout: it is dropped, unless it waits in `idle` (which is
    /// silent by design, as in mpd) or a batch of its commands is still running.
    public mutating func silent() -> [Action] {
        switch state {
        case .idle, .executing, .closed: return []
        case .ready, .collecting: return closeNow()
        }
    }

    /// Something changed in the daemon.
    public mutating func changed(_ subsystems: Set<IdleSubsystem>) -> [Action] {
        guard state != .closed, !subsystems.isEmpty else { return [] }
        pending.formUnion(subsystems)
        guard case .idle(let mask) = state, !pending.isDisjoint(with: mask) else { return [] }
        state = .ready
        return [Action.send(takeChanges(mask))] + drain()
    }

    /// Takes the lines that came while a batch ran, until the next batch starts.
    private mutating func drain() -> [Action] {
        var actions: [Action] = []
        while !queued.isEmpty, state != .executing, state != .closed {
            actions += receive(queued.removeFirst())
        }
        return actions
    }

    /// The line without the blanks around it. Foundation's `trimmingCharacters(in: .whitespaces)` goes through an
    /// NSString here and took a tenth of a `status` round trip.
    static func trimmed(_ line: String) -> Substring {
        func isBlank(_ c: Character) -> Bool { c == " " || c == "\t" || (c.isWhitespace && !c.isNewline) }
        guard let first = line.firstIndex(where: { !isBlank($0) }), let last = line.lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return line[first...last]
    }

    private mutating func start(_ line: String) -> [Action] {
        let trimmed = Self.trimmed(line)
        switch trimmed {
        case "command_list_begin":
            state = .collecting(lines: [], bytes: 0, mode: .list)
            return []
        case "command_list_ok_begin":
            state = .collecting(lines: [], bytes: 0, mode: .listOK)
            return []
        case "noidle":
            // Not idle: nothing to cancel, and mpd answers nothing.
            return []
        case "close":
            return closeNow()
        default:
            break
        }
        if trimmed == "idle" || trimmed.hasPrefix("idle ") || trimmed.hasPrefix("idle\t") {
            if locked { return [.send(Array(MPDAck(.permission, "you don't have permission for \"idle\"", command: "idle").line.utf8))] }
            return idle(String(trimmed))
        }
        state = .executing
        return [.execute([line], .single)]
    }

    /// `idle [SUBSYSTEM…]`: answers at once with what changed since the last time, else waits.
    private mutating func idle(_ line: String) -> [Action] {
        let arguments: [String]
        do {
            arguments = try CommandTokenizer.tokenize(line).arguments
        } catch {
            return [.send(Array(error.line.utf8))]
        }
        var mask: Set<IdleSubsystem> = []
        for name in arguments {
            guard let subsystem = IdleSubsystem.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(name) == .orderedSame }) else {
                return [.send(Array(MPDAck(.arg, "Unrecognized idle event: \(name)", command: "idle").line.utf8))]
            }
            mask.insert(subsystem)
        }
        if mask.isEmpty { mask = Set(IdleSubsystem.allCases) }
        if !pending.isDisjoint(with: mask) { return [.send(takeChanges(mask))] }
        state = .idle(mask)
        return []
    }

    /// The `changed:` lines for what the client waits on; mpd then forgets every pending event.
    private mutating func takeChanges(_ mask: Set<IdleSubsystem>) -> [UInt8] {
        let names = IdleSubsystem.allCases.filter { pending.contains($0) && mask.contains($0) }
        pending = []
        return Array((names.map { "changed: \($0.rawValue)\n" }.joined() + "OK\n").utf8)
    }

    private mutating func closeNow() -> [Action] {
        state = .closed
        queued = []
        return [.close]
    }
}

import NIOCore
import Synchronization
import TonearmCore

/// The state's JSON text (`GET /api/v1/state`), encoded once per published state: a read copies the text around the
/// position and writes only the position afresh, so a remote polling many times a second costs a copy, not an encoding.
final class StateText: Sendable {
    private struct Encoded {
        var revision: UInt64
        /// `{` … `"position":`, and `,` … `}`.
        var head: [UInt8]
        var tail: [UInt8]
    }
    private let encoded = Mutex<Encoded?>(nil)

    /// The text of `state`, which must be the published state (its revision names it), with the position at `now`.
    func buffer(of state: PlayerState, at now: ContinuousClock.Instant = .now) -> ByteBuffer {
        let parts = encoded.withLock { cached -> Encoded in
            if let cached, cached.revision == state.revision { return cached }
            let made = Self.encode(state)
            cached = made
            return made
        }
        var position: [UInt8] = []
        Shapes.position(state, at: now).write(to: &position)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(parts.head.count + position.count + parts.tail.count)
        buffer.writeBytes(parts.head)
        buffer.writeBytes(position)
        buffer.writeBytes(parts.tail)
        return buffer
    }

    private static func encode(_ state: PlayerState) -> Encoded {
        let (before, after) = Shapes.stateMembers(state)
        var head: [UInt8] = [UInt8(ascii: "{")]
        JSON.write(members: before, to: &head)
        head.append(contentsOf: #","position":"#.utf8)
        var tail: [UInt8] = [UInt8(ascii: ",")]
        JSON.write(members: after, to: &tail)
        tail.append(UInt8(ascii: "}"))
        return Encoded(revision: state.revision, head: head, tail: tail)
    }
}

import TonearmCore

/// mpd's playlist version: a number that grows with every change to the queue, and for each entry the version at
/// which it last changed (moved, added, retagged), which `plchanges` asks for.
public struct QueueVersions: Sendable {
    public private(set) var version: UInt32 = 1
    private(set) var ids: [TrackID] = []
    private var changedAt: [TrackID: UInt32] = [:]

    public init() {}

    /// The queue's order now; bumps the version when it differs from the last one.
    public mutating func update(_ new: [TrackID]) {
        guard new != ids else { return }
        version &+= 1
        for (index, id) in new.enumerated() where index >= ids.count || ids[index] != id {
            changedAt[id] = version
        }
        ids = new
        if changedAt.count > 2 * ids.count + 64 {
            let present = Set(ids)
            changedAt = changedAt.filter { present.contains($0.key) }
        }
    }

    /// An entry's tags changed.
    public mutating func touch(_ id: TrackID) {
        guard ids.contains(id) else { return }
        version &+= 1
        changedAt[id] = version
    }

    /// Positions of entries changed after `since` (all when `since` is not an earlier version).
    public func changed(since: UInt32) -> [Int] {
        guard since <= version else { return Array(ids.indices) }
        return ids.indices.filter { (changedAt[ids[$0]] ?? 0) > since }
    }
}

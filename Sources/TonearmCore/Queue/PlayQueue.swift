/// The queue as a value: tracks in list order, the current one, and the play order
/// (the list order, or a shuffled permutation that plays every track once before any repeats).
public struct PlayQueue: Sendable, Codable, Equatable {
    public private(set) var tracks: [Track] = []
    public private(set) var currentID: TrackID?
    public var loop: LoopStatus = .none
    public private(set) var shuffle = false
    /// Play order while shuffled; empty otherwise.
    private var shuffledOrder: [TrackID] = []
    private var nextSerial: UInt64 = 1
    /// Where each entry is in `tracks`. Every read of the Player's state looks entries up (the current one, the next,
    /// the previous): by scanning, a queue of 10,000 entries cost a pause or an enrichment tens of thousands of string
    /// comparisons. Derived from `tracks`, so it is neither saved nor compared.
    private var positions: [TrackID: Int] = [:]

    public init() {}

    private enum CodingKeys: String, CodingKey { case tracks, currentID, loop, shuffle, shuffledOrder, nextSerial }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        tracks = try c.decode([Track].self, forKey: .tracks)
        currentID = try c.decodeIfPresent(TrackID.self, forKey: .currentID)
        loop = try c.decode(LoopStatus.self, forKey: .loop)
        shuffle = try c.decode(Bool.self, forKey: .shuffle)
        shuffledOrder = try c.decode([TrackID].self, forKey: .shuffledOrder)
        nextSerial = try c.decode(UInt64.self, forKey: .nextSerial)
        reindex()
    }

    public static func == (a: PlayQueue, b: PlayQueue) -> Bool {
        a.tracks == b.tracks && a.currentID == b.currentID && a.loop == b.loop && a.shuffle == b.shuffle
            && a.shuffledOrder == b.shuffledOrder && a.nextSerial == b.nextSerial
    }

    /// Brings `positions` up to date for the entries from `start` on (the ones before it did not move).
    private mutating func reindex(from start: Int = 0) {
        if start == 0 { positions.removeAll(keepingCapacity: true) }
        for index in start..<tracks.count { positions[tracks[index].id] = index }
    }

    /// Where the entry is in list order, without a scan.
    public func position(of id: TrackID) -> Int? { positions[id] }

    // MARK: Reading

    public var isEmpty: Bool { tracks.isEmpty }
    public var ids: [TrackID] { tracks.map(\.id) }
    public var current: Track? { currentID.flatMap(track) }

    public func track(_ id: TrackID) -> Track? { position(of: id).map { tracks[$0] } }
    public func contains(_ id: TrackID) -> Bool { position(of: id) != nil }

    /// The order tracks play in.
    public var playOrder: [TrackID] { shuffle ? shuffledOrder : ids }

    /// The track after `id` in play order. `automatic` means the track ended by itself,
    /// so LoopStatus.track repeats it; a user's Next moves on regardless.
    public func next(after id: TrackID?, automatic: Bool) -> TrackID? {
        guard !shuffle else { return Self.next(in: shuffledOrder, after: id, index: shuffledOrder.firstIndex(of:), automatic, loop) }
        return Self.next(in: tracks.lazy.map(\.id), after: id, index: position(of:), automatic, loop)
    }

    private static func next<Order: RandomAccessCollection<TrackID>>(
        in order: Order, after id: TrackID?, index: (TrackID) -> Order.Index?, _ automatic: Bool, _ loop: LoopStatus
    ) -> TrackID? {
        guard let id, let i = index(id) else { return order.first }
        if automatic && loop == .track { return id }
        let after = order.index(after: i)
        if after < order.endIndex { return order[after] }
        return loop == .playlist ? order.first : nil
    }

    /// The track before `id` in play order (wrapping only with LoopStatus.playlist).
    public func previous(before id: TrackID?) -> TrackID? {
        guard let id else { return nil }
        let index = shuffle ? shuffledOrder.firstIndex(of: id) : position(of: id)
        guard let index else { return nil }
        if index > 0 { return shuffle ? shuffledOrder[index - 1] : tracks[index - 1].id }
        return loop == .playlist ? (shuffle ? shuffledOrder.last : tracks.last?.id) : nil
    }

    // MARK: Editing

    /// Makes a new entry with a fresh id (ids are never reused, so clients never confuse two entries).
    public mutating func makeTrack(_ metadata: TrackMetadata) -> Track {
        defer { nextSerial += 1 }
        return Track(id: TrackID(serial: nextSerial), metadata: metadata)
    }

    /// Where new tracks go.
    public enum Position: Sendable, Equatable {
        case end, front, afterCurrent
        case after(TrackID)
    }

    /// Inserts tracks; returns false when `after` names no entry.
    @discardableResult
    public mutating func insert<R: RandomNumberGenerator>(_ new: [Track], at position: Position, using rng: inout R) -> Bool {
        let listIndex: Int
        switch position {
        case .end: listIndex = tracks.count
        case .front: listIndex = 0
        case .afterCurrent:
            listIndex = currentID.flatMap(self.position(of:)).map { $0 + 1 } ?? tracks.count
        case .after(let id):
            guard let i = self.position(of: id) else { return false }
            listIndex = i + 1
        }
        tracks.insert(contentsOf: new, at: listIndex)
        reindex(from: listIndex)
        if shuffle {
            let currentOrderIndex = currentID.flatMap { shuffledOrder.firstIndex(of: $0) }
            let ids = new.map(\.id)
            if position == .afterCurrent || position == .front, let c = currentOrderIndex {
                shuffledOrder.insert(contentsOf: ids, at: c + 1)
            } else {
                // Not yet played in this round: somewhere after the current track.
                let lower = (currentOrderIndex ?? -1) + 1
                for id in ids {
                    shuffledOrder.insert(id, at: Int.random(in: lower...shuffledOrder.count, using: &rng))
                }
            }
        }
        return true
    }

    @discardableResult
    public mutating func insert(_ new: [Track], at position: Position) -> Bool {
        var rng = SystemRandomNumberGenerator()
        return insert(new, at: position, using: &rng)
    }

    /// Removes an entry. When it was current, the current entry becomes the one that followed it (or none).
    @discardableResult
    public mutating func remove(_ id: TrackID) -> Bool {
        guard let index = position(of: id) else { return false }
        if currentID == id {
            currentID = next(after: id, automatic: false) == id ? nil : next(after: id, automatic: false)
        }
        tracks.remove(at: index)
        positions[id] = nil
        reindex(from: index)
        shuffledOrder.removeAll { $0 == id }
        if tracks.isEmpty { currentID = nil }
        return true
    }

    /// Moves an entry after another one (nil: to the front).
    @discardableResult
    public mutating func move(_ id: TrackID, after other: TrackID?) -> Bool {
        guard id != other, let from = position(of: id) else { return false }
        let after = other.flatMap(position(of:))
        if other != nil, after == nil { return false }
        let entry = tracks.remove(at: from)
        // Just after `other`, which moves up one when it came after the entry taken out.
        let to = after.map { $0 < from ? $0 + 1 : $0 } ?? 0
        tracks.insert(entry, at: to)
        reindex(from: min(from, to))
        return true
    }

    /// Puts the entries in the given order, a permutation of `ids`; false (and nothing changed) otherwise. One pass,
    /// so an MPD client's shuffle or move of a 10,000-entry queue costs a dictionary, not a move per entry.
    @discardableResult
    public mutating func reorder(_ order: [TrackID]) -> Bool {
        guard order.count == tracks.count else { return false }
        var byID = Dictionary(uniqueKeysWithValues: tracks.map { ($0.id, $0) })
        var reordered: [Track] = []
        reordered.reserveCapacity(order.count)
        for id in order {
            guard let track = byID.removeValue(forKey: id) else { return false }
            reordered.append(track)
        }
        tracks = reordered
        reindex()
        return true
    }

    public mutating func clear() {
        tracks = []
        positions = [:]
        shuffledOrder = []
        currentID = nil
    }

    public mutating func setCurrent(_ id: TrackID?) {
        guard let id, contains(id) else {
            currentID = nil
            return
        }
        if shuffle, let old = currentID, shuffledOrder.last == old, shuffledOrder.first == id, shuffledOrder.count > 2 {
            // A new round: reshuffle everything after the track that starts it.
            var rest = Array(shuffledOrder.dropFirst())
            rest.shuffle()
            shuffledOrder = [id] + rest
        }
        currentID = id
    }

    public mutating func updateMetadata(_ id: TrackID, _ metadata: TrackMetadata) {
        guard let index = position(of: id) else { return }
        tracks[index].metadata = metadata
    }

    public mutating func setShuffle<R: RandomNumberGenerator>(_ on: Bool, using rng: inout R) {
        guard on != shuffle else { return }
        shuffle = on
        if on {
            var rest = tracks.map(\.id).filter { $0 != currentID }
            rest.shuffle(using: &rng)
            shuffledOrder = (currentID.map { [$0] } ?? []) + rest
        } else {
            shuffledOrder = []
        }
    }

    public mutating func setShuffle(_ on: Bool) {
        var rng = SystemRandomNumberGenerator()
        setShuffle(on, using: &rng)
    }
}

import Synchronization

/// An event with its place in the fan-out's order: consecutive numbers mean nothing was missed between them.
public struct Sequenced<Event: Sendable>: Sendable {
    public let sequence: UInt64
    public let event: Event

    public init(sequence: UInt64, event: Event) {
        self.sequence = sequence
        self.event = event
    }
}

/// The one way events leave a part (the Player, a plugin): each subscriber gets every event, numbered, through a
/// bounded buffer of its own. Publishing never waits: a subscriber that falls behind has its oldest events coalesced
/// or dropped (it sees the jump in sequence numbers and reads the published state afresh), never the publisher held
/// or another subscriber delayed.
///
/// A face whose own buffer takes an event without waiting (a socket's event loop, the bus connection's send queue)
/// listens instead (`listen`): it is handed each event at once, in order, with no task to wake in between.
public final class EventFanOut<Event: Sendable>: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        var subscribers: [UInt64: EventSubscription<Event>] = [:]
        /// In the order they are handed each event: the `first` ones, then the others, each in the order they came.
        var listeners: [(key: UInt64, listener: EventListener<Event>, first: Bool)] = []
        /// Events numbered but not yet handed to the listeners, oldest first.
        var undelivered: [Sequenced<Event>] = []
        /// Whether some publisher is handing events to the listeners now (the others leave theirs to it).
        var delivering = false
        var nextKey: UInt64 = 0
        var finished = false
    }
    private let state = Mutex(State())
    /// Whether a newer event may stand in for an older one still waiting in a full buffer.
    private let coalesces: @Sendable (_ older: Event, _ newer: Event) -> Bool

    /// `coalesces`: whether a newer event may replace an older one still waiting in a full buffer (two snapshots of
    /// the same state, two ticks); when it may not, the oldest waiting event is dropped.
    public init(coalesces: @escaping @Sendable (_ older: Event, _ newer: Event) -> Bool = { _, _ in false }) {
        self.coalesces = coalesces
    }

    /// The number the last published event carried (0 before any).
    public var lastSequence: UInt64 { state.withLock { $0.sequence } }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A new subscriber's buffer, holding up to `capacity` events; it gets every event published from now on, until
    /// it is cancelled (or its reading task is) or the fan-out finishes.
    public func subscribe(capacity: Int = 1024) -> EventSubscription<Event> {
        state.withLock { s in
            s.nextKey += 1
            let key = s.nextKey
            let subscription = EventSubscription<Event>(capacity: max(1, capacity)) { [weak self] in
                _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
            }
            if s.finished { subscription.finish() } else { s.subscribers[key] = subscription }
            return subscription
        }
    }

    /// Hands every event from now on to `deliver`, on the publishing thread, in order, outside any lock of the
    /// fan-out's; `deliver` must return at once (it puts the event in a buffer of the face's own, bounded by the face).
    /// It may still be called once after the listener is cancelled.
    /// `first`: handed each event before the other listeners. A listener that only wakes another thread (a socket's
    /// event loop) goes first, so that thread is on its way while a listener that encodes on this one works.
    public func listen(first: Bool = false, _ deliver: @escaping @Sendable (Sequenced<Event>) -> Void) -> EventListener<Event> {
        let (listener, finished) = state.withLock { s in
            s.nextKey += 1
            let key = s.nextKey
            let listener = EventListener<Event>(deliver: deliver) { [weak self] in
                self?.state.withLock { $0.listeners.removeAll { $0.key == key } }
            }
            if !s.finished {
                let at = first ? s.listeners.firstIndex { !$0.first } ?? s.listeners.endIndex : s.listeners.endIndex
                s.listeners.insert((key, listener, first), at: at)
            }
            return (listener, s.finished)
        }
        if finished { listener.end() }
        return listener
    }

    /// Hands `event` to every subscriber's buffer and every listener, and returns; returns its sequence number.
    @discardableResult
    public func publish(_ event: Event) -> UInt64 {
        let sequence = enqueue(event)
        deliverToListeners()
        return sequence
    }

    /// Numbers `event` and hands it to the subscribers' buffers; the listeners get it from `deliverToListeners`, which
    /// the caller runs once it holds no lock a listener might take (the published state's).
    func enqueue(_ event: Event) -> UInt64 {
        // Numbered and handed out under one lock so that every subscriber sees one order; each buffer's lock is
        // taken inside only to append, and a reader waiting for the event is resumed after both locks are let go (a
        // resume takes the reading task's own lock, which a task being cancelled holds while it takes ours).
        var handOver: [(UnsafeContinuation<Sequenced<Event>?, Never>, Sequenced<Event>)] = []
        let sequence = state.withLock { s -> UInt64 in
            guard !s.finished else { return s.sequence }
            s.sequence += 1
            let item = Sequenced(sequence: s.sequence, event: event)
            for subscriber in s.subscribers.values {
                if let waiter = subscriber.offer(item, coalesces: coalesces) { handOver.append((waiter, item)) }
            }
            if !s.listeners.isEmpty { s.undelivered.append(item) }
            return s.sequence
        }
        for (waiter, item) in handOver { waiter.resume(returning: item) }
        return sequence
    }

    /// Hands the events not yet delivered to the listeners, in order. One publisher at a time delivers, outside the
    /// lock: another one that publishes meanwhile leaves its event to the one delivering, which loops until none wait.
    func deliverToListeners() {
        while true {
            let batch = state.withLock { s -> ([Sequenced<Event>], [EventListener<Event>])? in
                guard !s.delivering, !s.undelivered.isEmpty else { return nil }
                s.delivering = true
                defer { s.undelivered.removeAll(keepingCapacity: true) }
                return (s.undelivered, s.listeners.map(\.listener))
            }
            guard let (items, listeners) = batch else { return }
            // A listener is handed all the events waiting before the next one is: a face that only wakes its thread
            // (first in the list) has them all on the way before a face that encodes on this thread starts.
            for listener in listeners {
                for item in items { listener.deliver(item) }
            }
            state.withLock { $0.delivering = false }
        }
    }

    /// Ends every subscription (after what is buffered) and refuses new events.
    public func finish() {
        let (subscribers, listeners) = state.withLock { s -> ([EventSubscription<Event>], [EventListener<Event>]) in
            s.finished = true
            defer { s.subscribers = [:]; s.listeners = [] }
            return (Array(s.subscribers.values), s.listeners.map(\.listener))
        }
        for subscriber in subscribers { subscriber.finish() }
        for listener in listeners { listener.end() }
    }
}

/// A listener of a fan-out (`EventFanOut.listen`): `cancel` stops the deliveries, `ended` waits for the end.
public final class EventListener<Event: Sendable>: Sendable {
    let deliver: @Sendable (Sequenced<Event>) -> Void
    private let unregister: @Sendable () -> Void
    private let waiters = Mutex<(ended: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))

    init(deliver: @escaping @Sendable (Sequenced<Event>) -> Void, unregister: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.unregister = unregister
    }

    /// Stops the deliveries (one under way may still arrive) and ends `ended`.
    public func cancel() {
        unregister()
        end()
    }

    /// Returns once the listener is cancelled or the fan-out has finished.
    public func ended() async {
        await withCheckedContinuation { continuation in
            let done = waiters.withLock { w -> Bool in
                if !w.ended { w.continuations.append(continuation) }
                return w.ended
            }
            if done { continuation.resume() }
        }
    }

    func end() {
        let waiting = waiters.withLock { w -> [CheckedContinuation<Void, Never>] in
            w.ended = true
            defer { w.continuations = [] }
            return w.continuations
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// One subscriber's bounded buffer of a fan-out's events, read by one task in order (`for await`); nil ends it.
public final class EventSubscription<Event: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Sequenced<Event>

    private struct Buffer {
        var items: [Sequenced<Event>] = []
        var head = 0
        var waiter: UnsafeContinuation<Sequenced<Event>?, Never>?
        var finished = false
        var dropped = 0
        var count: Int { items.count - head }

        mutating func popFirst() -> Sequenced<Event>? {
            guard head < items.count else { return nil }
            defer {
                head += 1
                if head == items.count {
                    items.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 64, head * 2 >= items.count {
                    items.removeFirst(head)
                    head = 0
                }
            }
            return items[head]
        }
    }
    private let buffer = Mutex(Buffer())
    public let capacity: Int
    private let unregister: @Sendable () -> Void

    init(capacity: Int, unregister: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.unregister = unregister
    }

    /// How many events were dropped or coalesced because this subscriber fell behind.
    public var dropped: Int { buffer.withLock { $0.dropped } }
    /// How many events wait to be read.
    public var backlog: Int { buffer.withLock { $0.count } }

    /// Takes `item`; returns the reader waiting for it, to be resumed by the caller outside any lock.
    func offer(_ item: Sequenced<Event>, coalesces: (Event, Event) -> Bool) -> UnsafeContinuation<Sequenced<Event>?, Never>? {
        buffer.withLock { b in
            guard !b.finished else { return nil }
            if let waiter = b.waiter {
                b.waiter = nil
                return waiter
            }
            if b.count >= capacity {
                b.dropped += 1
                if let last = b.items.last, coalesces(last.event, item.event) {
                    b.items[b.items.count - 1] = item
                    return nil
                }
                _ = b.popFirst()
            }
            b.items.append(item)
            return nil
        }
    }

    /// The next event, waiting for it; nil once the subscription ended (cancelled, finished, or the reading task
    /// was cancelled).
    public func next() async -> Sequenced<Event>? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Sequenced<Event>?, Never>) in
                let ready: Sequenced<Event>?? = buffer.withLock { b in
                    if let item = b.popFirst() { return .some(item) }
                    if b.finished || Task.isCancelled { return .some(nil) }
                    b.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops this subscription: the reader gets nil after nothing more, and the fan-out forgets it.
    public func cancel() {
        let waiter = buffer.withLock { b -> UnsafeContinuation<Sequenced<Event>?, Never>? in
            b.finished = true
            b.items.removeAll()
            b.head = 0
            defer { b.waiter = nil }
            return b.waiter
        }
        waiter?.resume(returning: nil)
        unregister()
    }

    /// Ends the subscription after what is buffered.
    func finish() {
        let waiter = buffer.withLock { b -> UnsafeContinuation<Sequenced<Event>?, Never>? in
            b.finished = true
            defer { b.waiter = nil }
            return b.waiter
        }
        waiter?.resume(returning: nil)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: EventSubscription<Event>
        public mutating func next() async -> Sequenced<Event>? { await subscription.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }
}

extension PlaybackMachine {
    /// What the pipeline is doing. Each case carries only what it needs: a seek waits for the preroll inside
    /// `.prerolling`, is issued or in flight inside `.running`; a hand-over or a drain exists only while an item is
    /// opening or running.
    enum State: Equatable {
        /// Nothing under way: never loaded, stopped, or the current item failed.
        case idle
        /// Waiting for the first preroll (ASYNC_DONE) before the deadline.
        case prerolling(Preroll)
        /// Prerolled: playing, paused or buffering as the status says.
        case running(Running)
        /// EOS reached (or a stalled drain ended): waiting for a load, a stop, or a seek back.
        case finished
    }

    struct Preroll: Equatable {
        /// When the load was asked for: the preroll is given up on at `prerollCeiling` past it, whatever happens.
        var began: ContinuousClock.Instant
        /// The preroll timeout past the last sign of progress from the pipeline.
        var deadline: ContinuousClock.Instant
        /// The seek waiting for the preroll: a start position, a seek asked for while opening, or a rate.
        var startSeek: StartSeek?
        var handOver = HandOver.clear
    }

    struct StartSeek: Equatable {
        var position: Int64
        /// What Position reads until it settles (nil for a bare rate: the pipeline's own position is right).
        var target: Int64?
        /// Whether it ends with `.seekCompleted` (a restore, a reload or a user's seek; not a bare rate).
        var reports: Bool
    }

    struct Running: Equatable {
        var seek = Seek.none
        var handOver = HandOver.clear
        /// The network buffer ran low: the pipeline is held in PAUSED until it is full again.
        var buffering = false
        /// Since when playbin has sat in PAUSED while it should play (see `stateCheck`).
        var stuck: Stuck?
    }

    /// The seek sub-machine of a running item (a seek before the preroll is `Preroll.startSeek`).
    enum Seek: Equatable {
        case none
        /// Decided, and gst_element_seek has not returned: no hand-over meanwhile (it would play the next item from
        /// the seek position).
        case issuing(Flight)
        /// Issued; settled by the first ASYNC_DONE popped after its marker.
        case inFlight(Flight)
        /// Settled before the pipeline was back in PLAYING: a pause now can meet the fault `asyncDone` describes,
        /// so where it went is kept until PLAYING comes.
        case landed(target: Int64)

        var flight: Flight? {
            switch self {
            case .issuing(let flight), .inFlight(let flight): return flight
            case .none, .landed: return nil
            }
        }

        /// The same stage with `flight` in place of its own.
        func with(_ flight: Flight) -> Seek {
            switch self {
            case .issuing: return .issuing(flight)
            case .inFlight: return .inFlight(flight)
            case .none, .landed: return self
            }
        }

        var isIssuing: Bool {
            if case .issuing = self { return true }
            return false
        }

        /// Issued or in flight: the pipeline's state and position are the seek's, not the user's.
        var isUnderWay: Bool { flight != nil }
    }

    /// One flushing seek, from its decision until it settles.
    struct Flight: Equatable {
        var position: Int64
        var serial: UInt64
        /// What Position reads until it settles (nil for a silent one: the rate carried over a hand-over).
        var target: Int64?
        /// Whether it ends with `.seekCompleted`.
        var reports: Bool
        /// The start seek made after the preroll: the pipeline is set playing once it settles.
        var atStart: Bool
        /// A pause came while it was under way from PLAYING: made again once it settles.
        var pausedDuring = false
        /// It is itself the second seek: no third.
        var repeated = false
    }

    /// The gapless hand-over of the item that is opening or running.
    enum HandOver: Equatable {
        case clear
        /// Items handed over in about-to-finish that have not started (oldest first, never empty), and the progress
        /// watch that gives up on one that never starts.
        case pending([PlaybackItem], watch: Progress?)
        /// The next item failed: the current one plays to its end, watched.
        case draining(Progress)

        var pending: [PlaybackItem] {
            if case .pending(let items, _) = self { return items }
            return []
        }
    }

    /// The current item's position over time, while a hand-over or a drain is watched.
    struct Progress: Equatable {
        var lastPosition: Int64?
        var lastAdvance: ContinuousClock.Instant
        /// The current item's duration before the hand-over: a query now may answer for the next item.
        var duration: Int64?

        /// Time only counts while the item should advance.
        mutating func observe(_ position: Int64?, at now: ContinuousClock.Instant, advancing: Bool) {
            guard advancing else {
                lastAdvance = now
                return
            }
            if position != lastPosition {
                lastPosition = position
                lastAdvance = now
            }
        }
    }

    struct Stuck: Equatable {
        var since: ContinuousClock.Instant
        var nudged = false
    }

    /// What the pipeline has shown of the current item's stream.
    struct Media: Equatable {
        /// nil until known; once seekable, an item stays so (a query can fail while the pipeline is busy).
        var seekable: Bool?
        /// STREAM_START came for the item.
        var started = false
        /// Its stream-start group id (a flushing seek repeats it).
        var group: UInt32?
        /// A reload of the same item: its STREAM_START is not a new `.started`.
        var silentStart = false
        var tags = StreamTags()
        var lastDuration: Int64??
        /// The fill level last reported with `.buffering`.
        var bufferingLevel = 100
        /// When it began after a gapless hand-over; nil once it was loaded or sought.
        var handedOverAt: ContinuousClock.Instant?
    }

    struct Rejection: Equatable {
        var item: PlaybackItem
        var error: PlaybackError
    }
}

extension PlaybackMachine.State {
    var running: PlaybackMachine.Running? {
        if case .running(let running) = self { return running }
        return nil
    }

    /// The hand-over of an opening or running item; nil in the states that have none. Setting it elsewhere does
    /// nothing.
    var handOver: PlaybackMachine.HandOver? {
        get {
            switch self {
            case .prerolling(let preroll): return preroll.handOver
            case .running(let running): return running.handOver
            case .idle, .finished: return nil
            }
        }
        set {
            guard let newValue else { return }
            switch self {
            case .prerolling(var preroll):
                preroll.handOver = newValue
                self = .prerolling(preroll)
            case .running(var running):
                running.handOver = newValue
                self = .running(running)
            case .idle, .finished:
                break
            }
        }
    }

    /// A seek waits for the preroll, or is issued or in flight.
    var seekUnderWay: Bool {
        switch self {
        case .prerolling(let preroll): return preroll.startSeek != nil
        case .running(let running): return running.seek.isUnderWay
        case .idle, .finished: return false
        }
    }

    var isBuffering: Bool { running?.buffering ?? false }

    /// Where a seek (or a start at a position) is going until it settles: what Position reads meanwhile.
    var positionOverride: Int64? {
        switch self {
        case .prerolling(let preroll): return preroll.startSeek?.target
        case .running(let running):
            // Landed but not played since: the pipeline stands at the target, and its own position can be the faulty
            // one `asyncDone` describes (a stress run read 0.25 s right after a seek to 4 s settled).
            if case .landed(let target) = running.seek { return target }
            return running.seek.flight?.target
        case .idle, .finished: return nil
        }
    }

    var hasLanded: Bool {
        if case .landed = running?.seek { return true }
        return false
    }
}

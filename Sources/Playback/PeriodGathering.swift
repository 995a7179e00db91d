/// The rule of `AudioPeriod`, apart from GStreamer: which buffers go out together. Contiguous audio is gathered until
/// it fills a period; anything that is not the next piece of the same run (a discontinuity, a gap buffer after sound,
/// a buffer without timing) first sends what is gathered, and so does every serialized event, so nothing is reordered
/// and every timestamp, segment and event reaches the sink as it was sent.
struct PeriodGathering: Equatable, Sendable {
    /// What a buffer says of itself.
    struct Piece: Equatable, Sendable {
        /// Presentation time and duration in ns; nil when the buffer has none.
        var pts: UInt64?
        var duration: UInt64?
        var bytes: Int
        /// DISCONT or RESYNC: the start of a new run.
        var startsRun = false
        /// GAP: silence standing in for missing audio.
        var isGap = false
    }

    /// What to do with a buffer.
    enum Action: Equatable, Sendable {
        /// Add it to what is gathered and wait for more.
        case hold
        /// Add it, then send all that is gathered as one buffer.
        case holdAndSend
        /// Send what is gathered first (if anything), then treat the buffer as the start of a new gathering: `then`
        /// says whether it is held or sent at once.
        indirect case sendGatheredFirst(then: Action)
        /// Send it on alone, untouched (nothing is gathered).
        case pass
    }

    /// How many bytes make a period, from the stream's format; nil until the format is known (then every buffer
    /// passes).
    private(set) var periodBytes: Int?
    /// What is gathered now.
    private(set) var gathered = 0
    private var end: UInt64?
    private var gatheredGap = false

    /// The period in ns that gathering aims for.
    static let period: UInt64 = 100_000_000
    /// How far a timestamp may stray from where the gathered audio ends and still continue it (rounding in decoders).
    static let tolerance: UInt64 = 1_000_000

    /// The stream's format: `bytesPerFrame` × `rate` bytes a second. Whatever is gathered under the old format must
    /// have gone out first (the caps event did that).
    mutating func format(bytesPerFrame: Int, rate: Int) {
        precondition(gathered == 0, "a format change with audio gathered")
        periodBytes = bytesPerFrame > 0 && rate > 0 ? max(bytesPerFrame, bytesPerFrame * rate / Int(1_000_000_000 / Self.period)) : nil
    }

    /// A buffer arrived.
    mutating func buffer(_ piece: Piece) -> Action {
        guard let periodBytes, let pts = piece.pts, let duration = piece.duration, piece.bytes > 0 else {
            return event() ? .sendGatheredFirst(then: .pass) : .pass
        }
        guard gathered > 0 else { return start(piece, pts: pts, duration: duration, periodBytes: periodBytes) }
        let continues = !piece.startsRun && piece.isGap == gatheredGap && end.map { Self.distance($0, pts) <= Self.tolerance } == true
        guard continues else {
            drop()
            return .sendGatheredFirst(then: start(piece, pts: pts, duration: duration, periodBytes: periodBytes))
        }
        gathered += piece.bytes
        end = pts + duration
        guard gathered >= periodBytes else { return .hold }
        drop()
        return .holdAndSend
    }

    /// A serialized event (segment, caps, tags, end of stream, a marker…) is about to go downstream: whether what is
    /// gathered must go out first.
    mutating func event() -> Bool {
        guard gathered > 0 else { return false }
        drop()
        return true
    }

    /// A flush, or the pad going down; also once what is gathered has gone out: nothing is gathered.
    mutating func drop() {
        gathered = 0
        end = nil
        gatheredGap = false
    }

    private mutating func start(_ piece: Piece, pts: UInt64, duration: UInt64, periodBytes: Int) -> Action {
        if piece.bytes >= periodBytes { return .pass }
        gathered = piece.bytes
        end = pts + duration
        gatheredGap = piece.isGap
        return .hold
    }

    private static func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }
}

import CGStreamer
import Synchronization

/// The last element of playbin's audio filter: it hands the sink a tenth of a second at a time, however small the
/// decoder's buffers (5–40 ms). Each buffer costs the sink a clock wait and playsink's queue a wake of the decoding
/// thread, so fewer, larger buffers take most of the CPU of playback away: playing a WAV into a synced sink took
/// 0.30 s of CPU a minute through a bare playbin and 0.12 s with a period in front of the sink, an Ogg 0.78 and 0.24.
///
/// Unlike `audiobuffersplit`, it never makes timestamps or segments of its own (that one keeps the first segment
/// across a gapless join, so the next track's position went on from the last one's end): buffers are only joined
/// when each continues the one before, and every serialized event sends what is gathered first (`PeriodGathering`).
final class AudioPeriod: Sendable {
    private let pads: FilterPads
    /// The element to put in the filter.
    var element: UnsafeMutablePointer<GstElement> { pads.element }

    private struct State: @unchecked Sendable {
        var rule = PeriodGathering()
        /// The gathered audio, one buffer; owned here.
        var held: UnsafeMutablePointer<GstBuffer>?
    }
    /// Taken on the streaming thread, and by a pad deactivation once streaming stopped.
    private let state = Mutex(State())

    init() throws {
        pads = try FilterPads(name: "tonearm-period")
        pads.handle(FilterPads.Handlers(
            chain: { [unowned self] in self.chain($0) },
            downstream: { [unowned self] in self.downstream($0) },
            upstream: { [unowned self] in self.upstream($0) },
            activated: { [unowned self] active in if !active { self.dropHeld() } }))
    }

    deinit {
        dropHeld()
    }

    // MARK: - The streaming thread

    private func chain(_ buffer: UnsafeMutablePointer<GstBuffer>) -> GstFlowReturn {
        let flags = buffer.pointee.mini_object.flags
        let none = tn_clock_time_none()
        let piece = PeriodGathering.Piece(
            pts: buffer.pointee.pts == none ? nil : UInt64(buffer.pointee.pts),
            duration: buffer.pointee.duration == none ? nil : UInt64(buffer.pointee.duration),
            bytes: Int(gst_buffer_get_size(buffer)),
            startsRun: flags & (GST_BUFFER_FLAG_DISCONT.rawValue | GST_BUFFER_FLAG_RESYNC.rawValue) != 0,
            isGap: flags & GST_BUFFER_FLAG_GAP.rawValue != 0)
        // At most two go out: what was gathered before a break, then this buffer (alone or joined to what was held).
        var first: UnsafeMutablePointer<GstBuffer>?, second: UnsafeMutablePointer<GstBuffer>?
        state.withLock { s in
            var action = s.rule.buffer(piece)
            if case .sendGatheredFirst(let then) = action {
                first = s.held
                s.held = nil
                action = then
            }
            switch action {
            case .hold:
                s.held = s.held.map { Self.joined($0, buffer) } ?? buffer
            case .holdAndSend:
                second = s.held.map { Self.joined($0, buffer) } ?? buffer
                s.held = nil
            case .pass, .sendGatheredFirst:
                second = buffer
            }
        }
        var flow = GST_FLOW_OK
        if let first { flow = pads.push(first) }
        if let second {
            guard flow == GST_FLOW_OK else { gst_buffer_unref(second); return flow }
            flow = pads.push(second)
        }
        return flow
    }

    /// `first` with `next`'s memory after its own, lasting until `next` ends.
    private static func joined(_ first: UnsafeMutablePointer<GstBuffer>,
                               _ next: UnsafeMutablePointer<GstBuffer>) -> UnsafeMutablePointer<GstBuffer> {
        let end = next.pointee.pts + next.pointee.duration
        let offsetEnd = next.pointee.offset_end
        let joined = gst_buffer_append(first, next)!
        joined.pointee.duration = end - joined.pointee.pts
        joined.pointee.offset_end = offsetEnd
        return joined
    }

    private func downstream(_ event: UnsafeMutablePointer<GstEvent>) -> gboolean {
        let type = event.pointee.type
        switch type {
        case GST_EVENT_FLUSH_START:
            return pads.push(event)
        case GST_EVENT_FLUSH_STOP:
            dropHeld()
            return pads.push(event)
        default:
            break
        }
        guard type.rawValue & GST_EVENT_TYPE_SERIALIZED.rawValue != 0 else { return pads.push(event) }
        let held = state.withLock { s -> UnsafeMutablePointer<GstBuffer>? in
            guard s.rule.event() else { return nil }
            defer { s.held = nil }
            return s.held
        }
        if let held { _ = pads.push(held) }
        if type == GST_EVENT_CAPS {
            var caps: UnsafeMutablePointer<GstCaps>?
            gst_event_parse_caps(event, &caps)
            var info = GstAudioInfo()
            let known = caps.map { gst_audio_info_from_caps(&info, $0) != 0 } ?? false
            state.withLock { s in
                if known { s.rule.format(bytesPerFrame: Int(info.bpf), rate: Int(info.rate)) }
                else { s.rule.format(bytesPerFrame: 0, rate: 0) }
            }
        }
        return pads.push(event)
    }

    /// A live upstream learns that up to a period more is held here before the sink.
    private func upstream(_ query: UnsafeMutablePointer<GstQuery>) -> gboolean {
        guard query.pointee.type == GST_QUERY_LATENCY else { return pads.passOn(query) }
        guard pads.passOn(query) != 0 else { return 0 }
        var live: gboolean = 0
        var min: GstClockTime = 0, max: GstClockTime = 0
        gst_query_parse_latency(query, &live, &min, &max)
        let period = GstClockTime(PeriodGathering.period)
        gst_query_set_latency(query, live, min + period, max == tn_clock_time_none() ? max : max + period)
        return 1
    }

    private func dropHeld() {
        let held = state.withLock { s -> UnsafeMutablePointer<GstBuffer>? in
            s.rule.drop()
            defer { s.held = nil }
            return s.held
        }
        if let held { gst_buffer_unref(held) }
    }
}

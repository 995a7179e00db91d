import CGStreamer
import Foundation
import Synchronization

/// The crossfade's place in playbin's audio filter: an element (a bin with a sink and a src pad of its own) whose pad
/// functions feed a `CrossfadeMixer` on the streaming thread and send on what it returns. With crossfade off, or
/// while nothing is held, buffers pass through untouched.
///
/// The capsfilter ahead of it asks for the mixing format (`CrossfadeFormat`) while crossfade is on and for nothing
/// while it is off, so audio is converted only when a fade may need it.
final class Crossfader: Sendable {
    private let pads: FilterPads
    /// The element to put in the filter.
    var element: UnsafeMutablePointer<GstElement> { pads.element }
    nonisolated(unsafe) private let capsFilter: UnsafeMutablePointer<GstElement>

    /// A GStreamer event held in the mixer's line; unreferenced if dropped (a flush).
    final class HeldEvent: @unchecked Sendable {
        private var event: UnsafeMutablePointer<GstEvent>?
        init(_ event: UnsafeMutablePointer<GstEvent>) { self.event = event }
        /// The event, handed on exactly once.
        func take() -> UnsafeMutablePointer<GstEvent>? {
            defer { event = nil }
            return event
        }
        deinit { if let event { gst_event_unref(event) } }
    }

    private struct State: @unchecked Sendable {
        var mixer = CrossfadeMixer<HeldEvent>()
        /// The streams expected to start, in order, with how each comes in.
        var plans: [(token: UInt64, plan: CrossfadeMixer<HeldEvent>.Plan)] = []
        var group: UInt32?
        var seconds = 0.0
        var curve = FadeCurve.equalPower
        /// The fade a skip asked for, taken when the pipeline stops for it, and where the cut track was heard then.
        var skipSeconds = 0.0
        var skipHeard: Int64?
        /// The pipeline stopped for the skip since it was asked for: the load that follows keeps its fade-out.
        var skipTaken = false
        /// False from the pipeline stopping until it starts again: what the streaming thread still pushes of the old
        /// stream then is dropped, not mixed into the next item's start.
        var active = true
    }
    private let state = Mutex(State())

    /// - Parameter capsFilter: the capsfilter right ahead of this element, which sets the mixing format.
    init(capsFilter: UnsafeMutablePointer<GstElement>) throws {
        pads = try FilterPads(name: "tonearm-crossfade")
        self.capsFilter = capsFilter
        pads.handle(FilterPads.Handlers(
            chain: { [unowned self] in self.chain($0) },
            downstream: { [unowned self] in self.downstream($0) },
            upstream: { [unowned self] in self.upstream($0) },
            activated: { [unowned self] active in
                if active { self.state.withLock { $0.active = true } } else { self.stopped() }
            }))
    }

    // MARK: - Settings (any thread)

    /// Turns crossfade on for fades up to `seconds` (0 = off: nothing held, nothing converted), skipping trailing
    /// silence below `silenceThreshold` dBFS. Takes effect at once; a stream that plays gets the mixing format by
    /// renegotiation.
    func configure(seconds: Double, curve: FadeCurve, silenceThreshold: Double) {
        let on = seconds > 0
        state.withLock { s in
            s.seconds = seconds
            s.curve = curve
            s.mixer.holdSeconds = on ? min(seconds, CrossfadeFormat.maximumSeconds) + CrossfadeFormat.maximumSilence + 1 : 0
            s.mixer.silenceLevel = Float(pow(10, silenceThreshold / 20))
        }
        gst_util_set_object_arg(tn_object(capsFilter), "caps", on ? CrossfadeFormat.caps : "ANY")
    }

    /// The next load cuts what plays (a skip): what would have been heard next of it fades out over `seconds` under
    /// the new item's start. Only while crossfade is on (nothing is held otherwise).
    /// `heard`: the position heard now (ns), where the fade-out continues from.
    func prepareSkip(seconds: Double, heard: Int64?) {
        state.withLock { s in
            s.skipSeconds = s.seconds > 0 ? seconds : 0
            s.skipHeard = heard
        }
    }

    /// The pipeline stops (READY): nothing held outlives it, but the start of what a skip cut. A second stop before the
    /// next item's audio (playsink may take its chain down again) keeps that, too; the next load decides.
    private func stopped() {
        state.withLock { s in
            s.active = false
            if s.skipSeconds > 0 {
                s.mixer.flush(keepingForSkip: s.skipSeconds, heard: s.skipHeard, curve: s.curve)
                s.skipTaken = true
            } else {
                s.mixer.flush()
            }
            s.skipSeconds = 0
        }
    }

    /// A new item is loaded (the pipeline was reset): it starts with no fade, but the fade-out of what a skip just cut
    /// (any other load, a reopen or a start after Stop, forgets it).
    func load(_ item: PlaybackItem) {
        state.withLock { s in
            s.plans = [(item.token, .init(fade: nil, live: item.isLive))]
            s.group = nil
            if !s.skipTaken { s.mixer.forgetSkip() }
            s.skipTaken = false
        }
    }

    /// `item` was handed over to follow gaplessly: it comes in with its own crossfade, if any.
    func handOver(_ item: PlaybackItem) {
        state.withLock { s in
            s.plans.append((item.token, .init(fade: s.seconds > 0 ? item.crossfade : nil, live: item.isLive)))
        }
    }

    // MARK: - The streaming thread

    private func chain(_ buffer: UnsafeMutablePointer<GstBuffer>) -> GstFlowReturn {
        let (active, passing) = state.withLock { ($0.active, $0.mixer.isPassingThrough) }
        guard active else { gst_buffer_unref(buffer); return GST_FLOW_FLUSHING }
        if passing { return pads.push(buffer) }
        let size = gst_buffer_get_size(buffer)
        var samples = [Float](repeating: 0, count: Int(size) / MemoryLayout<Float>.size)
        samples.withUnsafeMutableBytes { _ = gst_buffer_extract(buffer, 0, $0.baseAddress, gsize($0.count)) }
        let pts = buffer.pointee.pts
        gst_buffer_unref(buffer)
        let outputs = state.withLock { s -> [CrossfadeMixer<HeldEvent>.Output]? in
            guard s.active else { return nil }
            return s.mixer.audio(samples, pts: pts == tn_clock_time_none() ? nil : Int64(pts))
        }
        guard let outputs else { return GST_FLOW_FLUSHING }
        return send(outputs)
    }

    private func downstream(_ event: UnsafeMutablePointer<GstEvent>) -> gboolean {
        let type = event.pointee.type
        let kind: CrossfadeMixer<HeldEvent>.Kind
        switch type {
        case GST_EVENT_FLUSH_START:
            return pads.push(event)
        case GST_EVENT_FLUSH_STOP:
            state.withLock { $0.mixer.flush() }
            return pads.push(event)
        case GST_EVENT_STREAM_START:
            var group: guint = 0
            let hasGroup = gst_event_parse_group_id(event, &group) != 0
            kind = state.withLock { s in
                // A seek or a reconfiguration may repeat STREAM_START within a group: only a new group is a new stream.
                guard hasGroup, UInt32(group) != s.group else { return .other }
                s.group = UInt32(group)
                return .streamStart(s.plans.isEmpty ? .gapless : s.plans.removeFirst().plan)
            }
        case GST_EVENT_CAPS:
            var caps: UnsafeMutablePointer<GstCaps>?
            gst_event_parse_caps(event, &caps)
            kind = .caps(caps.flatMap(Self.mixingFormat))
        case GST_EVENT_SEGMENT:
            var segment: UnsafePointer<GstSegment>?
            gst_event_parse_segment(event, &segment)
            kind = .segment(rate: segment?.pointee.rate ?? 1)
        case GST_EVENT_EOS:
            kind = .endOfStream
        default:
            guard type.rawValue & GST_EVENT_TYPE_SERIALIZED.rawValue != 0 else { return pads.push(event) }
            kind = .other
        }
        let held = HeldEvent(event)
        guard let outputs = state.withLock({ s in s.active ? s.mixer.event(held, kind) : nil }) else { return 0 }
        _ = send(outputs)
        return 1
    }

    private func upstream(_ query: UnsafeMutablePointer<GstQuery>) -> gboolean {
        // Upstream already decodes the next track while the end of this one is held: its duration is not the one
        // heard. Unknown until the next one starts.
        if query.pointee.type == GST_QUERY_DURATION, state.withLock({ $0.mixer.holdsStreamStart }) { return 0 }
        return pads.passOn(query)
    }

    private func send(_ outputs: [CrossfadeMixer<HeldEvent>.Output]) -> GstFlowReturn {
        var flow = GST_FLOW_OK
        for output in outputs {
            switch output {
            case .audio(let samples, let pts, let duration):
                guard flow == GST_FLOW_OK else { continue }
                let bytes = samples.count * MemoryLayout<Float>.size
                guard let buffer = gst_buffer_new_allocate(nil, gsize(bytes), nil) else { continue }
                samples.withUnsafeBytes { _ = gst_buffer_fill(buffer, 0, $0.baseAddress, gsize(bytes)) }
                buffer.pointee.pts = pts.map { GstClockTime($0) } ?? tn_clock_time_none()
                buffer.pointee.duration = duration > 0 ? GstClockTime(duration) : tn_clock_time_none()
                flow = pads.push(buffer)
            case .event(let held, let shift):
                guard let event = held.take() else { continue }
                pads.push(shift > 0 ? Self.shifted(event, by: shift) : event)
            }
        }
        return flow
    }

    /// A segment event whose base is lowered by `shift` ns (the running time the fade took out).
    private static func shifted(_ event: UnsafeMutablePointer<GstEvent>, by shift: Int64) -> UnsafeMutablePointer<GstEvent> {
        guard event.pointee.type == GST_EVENT_SEGMENT else { return event }
        var segment = GstSegment()
        gst_event_copy_segment(event, &segment)
        segment.base = segment.base > GstClockTime(shift) ? segment.base - GstClockTime(shift) : 0
        guard let new = gst_event_new_segment(&segment) else { return event }
        gst_event_set_seqnum(new, gst_event_get_seqnum(event))
        gst_event_unref(event)
        return new
    }

    /// The mixing format when `caps` are interleaved 32-bit float (what the capsfilter asks for while crossfade is
    /// on); nil otherwise.
    private static func mixingFormat(_ caps: UnsafeMutablePointer<GstCaps>) -> CrossfadeMixer<HeldEvent>.Format? {
        var info = GstAudioInfo()
        guard gst_audio_info_from_caps(&info, caps) != 0, info.finfo?.pointee.format == GST_AUDIO_FORMAT_F32LE,
              info.layout == GST_AUDIO_LAYOUT_INTERLEAVED, info.rate > 0, info.channels > 0 else { return nil }
        return .init(rate: Int(info.rate), channels: Int(info.channels))
    }
}

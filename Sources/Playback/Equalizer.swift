import CGStreamer
import Foundation
import Synchronization

/// The graphic equalizer in playbin's audio filter: `audioconvert ! capsfilter(F64) ! equalizer-10bands ! volume
/// (the preamp) ! audioconvert ! capsfilter(the format that came in)`, put in just before `tonearm-out` while it is
/// on and taken out when it is off, so that off is bit-exact: the filter is then exactly as without an equalizer.
///
/// Threads: `set` may be called from any thread. Elements are linked and unlinked only inside an IDLE probe on the
/// pad that feeds `tonearm-out` (no buffer is between the two then; it fires at once when nothing flows). Gains move
/// in small steps from a probe on the chain's sink pad, one step per buffer (`EqualizerRamp`): switching on inserts a
/// flat chain and ramps up; switching off ramps to flat, then takes the chain out. Only `state` (a Mutex) and the
/// elements' own thread-safe properties are touched from streaming threads.
final class Equalizer: Sendable {
    /// The filter bin (StreamGain's), which holds `tonearm-out`.
    nonisolated(unsafe) private let bin: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) private let out: UnsafeMutablePointer<GstElement>
    /// The pad that feeds `tonearm-out` on main's filter (the mixing capsfilter's src): the chain goes in after it.
    nonisolated(unsafe) private let feed: UnsafeMutablePointer<GstPad>
    /// The chain, in order, each with a reference of ours (the bin's comes and goes).
    nonisolated(unsafe) private let chain: [UnsafeMutablePointer<GstElement>]
    nonisolated(unsafe) private let iir: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) private let preamp: UnsafeMutablePointer<GstElement>
    /// Pinned to the caps that enter the chain, so that what leaves it (and the sink) never changes format.
    nonisolated(unsafe) private let outCaps: UnsafeMutablePointer<GstElement>

    private struct State {
        /// The curve asked for; nil: off.
        var wanted: EqualizerCurve?
        /// Whether the chain is linked in.
        var linked = false
        /// An IDLE probe waiting to link or unlink.
        var relinkPending = false
        var ramp = EqualizerRamp()
        /// Bytes per frame and rate of what flows through the chain (from its caps), for each buffer's duration.
        var bytesPerFrame = 0
        var rate = 0
    }
    private let state = Mutex(State())
    private let streamProbeID = Atomic<UInt>(0)
    private let queryProbeID = Atomic<UInt>(0)

    static let elementName = "tonearm-out"

    init(filter bin: UnsafeMutablePointer<GstElement>) throws {
        guard let out = gst_bin_get_by_name(tn_bin(bin), Self.elementName) else {
            throw PlaybackError(domain: "core", code: 0, message: "the audio filter has no \(Self.elementName)")
        }
        guard let outSink = gst_element_get_static_pad(out, "sink"), let feed = gst_pad_get_peer(outSink) else {
            gst_object_unref(out)
            throw PlaybackError(domain: "core", code: 0, message: "nothing feeds \(Self.elementName) in the audio filter")
        }
        gst_object_unref(outSink)
        func make(_ factory: String, _ name: String) throws -> UnsafeMutablePointer<GstElement> {
            guard let e = gst_element_factory_make(factory, name) else {
                throw PlaybackError(domain: "core", code: 0,
                                    message: "GStreamer's \(factory) element is missing (gstreamer1.0-plugins-good / -base)")
            }
            return UnsafeMutablePointer<GstElement>(OpaquePointer(gst_object_ref_sink(e)))
        }
        let made: [UnsafeMutablePointer<GstElement>]
        do {
            made = [try make("audioconvert", "tonearm-eq-convert"), try make("capsfilter", "tonearm-eq-float"),
                    try make("equalizer-10bands", "tonearm-eq"), try make("volume", "tonearm-eq-preamp"),
                    try make("audioconvert", "tonearm-eq-unconvert"), try make("capsfilter", "tonearm-eq-caps")]
        } catch {
            gst_object_unref(out)
            gst_object_unref(feed)
            throw error
        }
        // Doubles inside: no rounding between the bands and the preamp, and room above full scale until the end.
        if let caps = gst_caps_from_string("audio/x-raw,format=F64LE") {
            tn_object_set_object(made[1], "caps", caps)
            gst_caps_unref(caps)
        }
        // No dither on the way back: a flat curve then gives back the very samples that came in.
        gst_util_set_object_arg(tn_object(made[4]), "dithering", "none")
        gst_util_set_object_arg(tn_object(made[4]), "noise-shaping", "none")
        self.bin = bin
        self.out = out
        self.feed = feed
        chain = made
        iir = made[2]
        preamp = made[3]
        outCaps = made[5]

        let probe: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?) -> GstPadProbeReturn = { _, info, data in
            guard let info, let data else { return GST_PAD_PROBE_OK }
            let equalizer = Unmanaged<Equalizer>.fromOpaque(data).takeUnretainedValue()
            if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0,
               let buffer = info.pointee.data?.assumingMemoryBound(to: GstBuffer.self) {
                equalizer.willProcess(bytes: Int(gst_buffer_get_size(buffer)))
            } else if let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self), event.pointee.type == GST_EVENT_CAPS {
                var caps: UnsafeMutablePointer<GstCaps>?
                gst_event_parse_caps(event, &caps)
                if let caps { equalizer.capsArrived(caps) }
            }
            return GST_PAD_PROBE_OK
        }
        if let pad = gst_element_get_static_pad(made[0], "sink") {
            // Unretained: the shell keeps the equalizer as long as the playbin and its filter.
            let mask = GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
            let id = gst_pad_add_probe(pad, GstPadProbeType(rawValue: mask), probe, Unmanaged.passUnretained(self).toOpaque(), nil)
            streamProbeID.store(UInt(id), ordering: .relaxed)
            gst_object_unref(pad)
        }
        // playsink's queue (about 1 s) follows the filter, and a serialized ALLOCATION query waits there until it
        // is empty: the converter back to the sink's format asks one when it goes in while playing, which held the
        // stream for up to a second. Audio needs no pool from downstream: answer it here.
        let query: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?) -> GstPadProbeReturn = { _, info, _ in
            guard let query = info?.pointee.data?.assumingMemoryBound(to: GstQuery.self),
                  query.pointee.type == GST_QUERY_ALLOCATION else { return GST_PAD_PROBE_OK }
            return GST_PAD_PROBE_DROP
        }
        if let pad = gst_element_get_static_pad(made[made.count - 1], "src") {
            let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, query, nil, nil)
            queryProbeID.store(UInt(id), ordering: .relaxed)
            gst_object_unref(pad)
        }
        apply(EqualizerCurve.flat.values)
    }

    deinit {
        if let pad = gst_element_get_static_pad(chain[0], "sink") {
            let id = streamProbeID.load(ordering: .relaxed)
            if id != 0 { gst_pad_remove_probe(pad, gulong(id)) }
            gst_object_unref(pad)
        }
        if let pad = gst_element_get_static_pad(chain[chain.count - 1], "src") {
            let id = queryProbeID.load(ordering: .relaxed)
            if id != 0 { gst_pad_remove_probe(pad, gulong(id)) }
            gst_object_unref(pad)
        }
        for element in chain { gst_object_unref(element) }
        gst_object_unref(feed)
        gst_object_unref(out)
    }

    /// The curve asked for (nil: off).
    var curve: EqualizerCurve? { state.withLock { $0.wanted } }
    /// Whether the chain is in the filter now (it stays for a ramp to flat after off, while audio flows).
    var isLinked: Bool { state.withLock { $0.linked } }
    /// Whether the gains have reached the curve asked for (flat when off), and after off the chain is out.
    var isSettled: Bool { state.withLock { $0.ramp.isSettled && ($0.wanted != nil || !$0.linked) } }
    /// The gains applied now: ten bands then the preamp, dB.
    var appliedValues: [Double] { state.withLock { $0.ramp.current } }

    /// Switches the equalizer on with `curve`, changes it, or switches it off (nil). While audio flows the change is
    /// a ramp; otherwise it applies at once.
    func set(_ curve: EqualizerCurve?) {
        let flows = isFlowing
        let (values, relink) = state.withLock { s -> ([Double]?, Bool) in
            s.wanted = curve
            let target = (curve ?? .flat).values
            var values: [Double]?
            if !flows || !s.linked {
                // Nothing is heard (stopped), or the chain goes in flat first and ramps up once audio reaches it.
                s.ramp.settle(at: flows ? EqualizerCurve.flat.values : target)
                if flows { s.ramp.retarget(target) }
                values = s.ramp.current
            } else {
                s.ramp.retarget(target)
            }
            return (values, Self.needsRelink(s, flows: flows) && Self.claimRelink(&s))
        }
        if let values { apply(values) }
        if relink { requestRelink() }
    }

    /// Whether audio can move through the filter (paused or playing); when not, no ramp would ever advance.
    private var isFlowing: Bool { tn_state_current(out).rawValue >= GST_STATE_PAUSED.rawValue }

    private static func needsRelink(_ s: State, flows: Bool) -> Bool {
        if s.wanted != nil { return !s.linked }
        return s.linked && (!flows || s.ramp.current == EqualizerCurve.flat.values)
    }

    private static func claimRelink(_ s: inout State) -> Bool {
        guard !s.relinkPending else { return false }
        s.relinkPending = true
        return true
    }

    // MARK: - Linking (inside an IDLE probe)

    private func requestRelink() {
        let idle: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?) -> GstPadProbeReturn = { pad, _, data in
            guard let pad, let data else { return GST_PAD_PROBE_REMOVE }
            Unmanaged<Equalizer>.fromOpaque(data).takeUnretainedValue().relink(upstream: pad)
            return GST_PAD_PROBE_REMOVE
        }
        let release: @convention(c) (gpointer?) -> Void = { data in
            guard let data else { return }
            Unmanaged<Equalizer>.fromOpaque(data).release()
        }
        // Retained until the probe is gone: a probe still waiting when the engine shuts down must not outlive us.
        _ = gst_pad_add_probe(feed, GST_PAD_PROBE_TYPE_IDLE, idle, Unmanaged.passRetained(self).toOpaque(), release)
    }

    /// No buffer is between `upstream` and what follows it: link or unlink until the state asks for nothing more
    /// (a change made meanwhile is picked up here, since only one relink is pending at a time).
    private func relink(upstream: UnsafeMutablePointer<GstPad>) {
        while true {
            let flows = isFlowing
            let action = state.withLock { s -> Bool? in
                guard Self.needsRelink(s, flows: flows) else {
                    s.relinkPending = false
                    return nil
                }
                return !s.linked
            }
            guard let insert = action else { return }
            if insert { link(upstream) } else { unlink(upstream) }
            state.withLock { $0.linked = insert }
        }
    }

    private func link(_ upstream: UnsafeMutablePointer<GstPad>) {
        guard let outSink = gst_element_get_static_pad(out, "sink"),
              let first = gst_element_get_static_pad(chain[0], "sink"),
              let last = gst_element_get_static_pad(chain[chain.count - 1], "src") else { return }
        defer { gst_object_unref(outSink); gst_object_unref(first); gst_object_unref(last) }
        _ = gst_pad_unlink(upstream, outSink)
        for element in chain { _ = gst_bin_add(tn_bin(bin), element) }
        // Linked inside the bin each time: leaving the bin unlinked every pad.
        for i in 0..<(chain.count - 1) { _ = gst_element_link(chain[i], chain[i + 1]) }
        for element in chain { _ = gst_element_sync_state_with_parent(element) }
        _ = gst_pad_link(last, outSink)
        _ = gst_pad_link(upstream, first)
    }

    private func unlink(_ upstream: UnsafeMutablePointer<GstPad>) {
        guard let outSink = gst_element_get_static_pad(out, "sink"),
              let first = gst_element_get_static_pad(chain[0], "sink"),
              let last = gst_element_get_static_pad(chain[chain.count - 1], "src") else { return }
        defer { gst_object_unref(outSink); gst_object_unref(first); gst_object_unref(last) }
        _ = gst_pad_unlink(upstream, first)
        _ = gst_pad_unlink(last, outSink)
        _ = gst_pad_link(upstream, outSink)
        for element in chain {
            _ = gst_element_set_state(element, GST_STATE_NULL)
            _ = gst_bin_remove(tn_bin(bin), element)
        }
        // Back to flat for the next time it goes in. A curve asked for while this removal was under way (it saw the
        // chain still in) goes in again at once: from flat with a ramp while audio flows, else straight to it.
        let flows = isFlowing
        let values = state.withLock { s -> [Double] in
            s.ramp.settle(at: EqualizerCurve.flat.values)
            if let wanted = s.wanted {
                if flows { s.ramp.retarget(wanted.values) } else { s.ramp.settle(at: wanted.values) }
            }
            return s.ramp.current
        }
        apply(values)
    }

    // MARK: - Streaming thread

    /// The format that enters the chain leaves it too: the sink never sees a new format (a WAV file cannot take one).
    private func capsArrived(_ caps: UnsafeMutablePointer<GstCaps>) {
        var info = GstAudioInfo()
        if gst_audio_info_from_caps(&info, caps) != 0 {
            state.withLock { s in
                s.bytesPerFrame = Int(info.bpf)
                s.rate = Int(info.rate)
            }
        }
        tn_object_set_object(outCaps, "caps", caps)
    }

    /// Before a buffer goes through the chain: the ramp's next step, and the chain's removal once a ramp to flat ends.
    private func willProcess(bytes: Int) {
        let (values, relink) = state.withLock { s -> ([Double]?, Bool) in
            guard s.bytesPerFrame > 0, s.rate > 0 else { return (nil, false) }
            let seconds = Double(bytes / s.bytesPerFrame) / Double(s.rate)
            let values = s.ramp.advance(by: seconds)
            return (values, Self.needsRelink(s, flows: true) && Self.claimRelink(&s))
        }
        if let values { apply(values) }
        // The pad is busy with this buffer: the IDLE probe fires once it has been pushed on.
        if relink { requestRelink() }
    }

    private func apply(_ values: [Double]) {
        for band in 0..<10 { tn_object_set_double(iir, "band\(band)", values[band]) }
        tn_object_set_double(preamp, "volume", min(10, pow(10, values[10] / 20)))
    }
}

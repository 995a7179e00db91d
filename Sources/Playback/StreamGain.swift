import CGStreamer
import Synchronization

/// ReplayGain applied per stream: playbin's `audio-filter` is `audioconvert ! volume`, and the volume's factor is
/// set when a new stream reaches it (a STREAM_START event with a new group id, on the filter's streaming thread,
/// just ahead of that stream's first buffer), from the gain of the item that stream belongs to. A gapless join thus
/// changes the gain at its boundary sample. (`rgvolume` keeps the previous track's gain across a gapless change.)
///
/// Items are queued in the order their streams will start: the loaded one, then each one handed over. The user's
/// volume is playbin's own `volume`, after this filter, and stays apart.
final class StreamGain: Sendable {
    /// The bin handed to playbin as `audio-filter`.
    nonisolated(unsafe) let bin: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) private let volume: UnsafeMutablePointer<GstElement>

    private struct State {
        /// Streams expected to start, in order: (token, factor).
        var queued: [(token: UInt64, gain: Double)] = []
        /// The item whose gain applies now.
        var current: UInt64?
        var applied = 1.0
        var group: UInt32?
    }
    private let state = Mutex(State())
    private let probeID = Atomic<UInt>(0)

    /// The filter chain: the gain, then the mixing format (a capsfilter that lets anything through unless a crossfade
    /// needs one fixed format), then the effects that act on what is heard (the equalizer), which are put in before
    /// `tonearm-out` while playing.
    static let description = "audioconvert ! volume name=tonearm-gain ! audioconvert name=tonearm-mix-convert"
        + " ! audioresample name=tonearm-mix-resample ! capsfilter name=tonearm-mix-caps ! identity name=tonearm-out silent=true"

    init() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let bin = gst_parse_bin_from_description_full(Self.description, 1, nil,
                                                            GST_PARSE_FLAG_FATAL_ERRORS, &error) else {
            throw GStreamer.consume(error, fallback: "cannot build the ReplayGain filter (audioconvert, volume)")
        }
        if let error { g_error_free(error) }
        _ = gst_object_ref_sink(bin)
        guard let volume = gst_bin_get_by_name(tn_bin(bin), "tonearm-gain") else {
            gst_object_unref(bin)
            throw PlaybackError(domain: "core", code: 0, message: "GStreamer's volume element is missing (gstreamer1.0-plugins-base)")
        }
        self.bin = bin
        self.volume = volume
        let callback: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?) -> GstPadProbeReturn = { _, info, data in
            guard let info, let data, let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self),
                  event.pointee.type == GST_EVENT_STREAM_START else { return GST_PAD_PROBE_OK }
            var group: guint = 0
            let hasGroup = gst_event_parse_group_id(event, &group) != 0
            Unmanaged<StreamGain>.fromOpaque(data).takeUnretainedValue().streamStarted(group: hasGroup ? UInt32(group) : nil)
            return GST_PAD_PROBE_OK
        }
        if let pad = gst_element_get_static_pad(volume, "sink") {
            // The probe holds the filter unretained: the shell keeps it alive as long as the playbin.
            let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, callback,
                                       Unmanaged.passUnretained(self).toOpaque(), nil)
            probeID.store(UInt(id), ordering: .relaxed)
            gst_object_unref(pad)
        }
    }

    /// Puts `element` (one sink and one src pad) in the chain right after the mixing format's capsfilter. Before the
    /// pipeline runs.
    func insertAfterMixingFormat(_ element: UnsafeMutablePointer<GstElement>) {
        guard let caps = gst_bin_get_by_name(tn_bin(bin), "tonearm-mix-caps") else { return }
        guard let out = gst_bin_get_by_name(tn_bin(bin), "tonearm-out") else { gst_object_unref(caps); return }
        gst_element_unlink(caps, out)
        _ = gst_bin_add(tn_bin(bin), element)
        _ = gst_element_link_pads(caps, "src", element, "sink")
        _ = gst_element_link_pads(element, "src", out, "sink")
        gst_object_unref(caps)
        gst_object_unref(out)
    }

    /// Puts `element` (one sink and one src pad) last, after `tonearm-out`: what leaves the filter leaves through it.
    /// Before the pipeline runs.
    func appendLast(_ element: UnsafeMutablePointer<GstElement>) {
        guard let out = gst_bin_get_by_name(tn_bin(bin), "tonearm-out") else { return }
        defer { gst_object_unref(out) }
        guard let ghost = gst_element_get_static_pad(bin, "src") else { return }
        defer { gst_object_unref(ghost) }
        guard let src = gst_element_get_static_pad(element, "src") else { return }
        defer { gst_object_unref(src) }
        _ = gst_bin_add(tn_bin(bin), element)
        _ = tn_ghost_pad_set_target(ghost, nil)
        _ = gst_element_link_pads(out, "src", element, "sink")
        _ = tn_ghost_pad_set_target(ghost, src)
    }

    /// The capsfilter that sets the mixing format (a crossfade's).
    var mixingCaps: UnsafeMutablePointer<GstElement>? { gst_bin_get_by_name(tn_bin(bin), "tonearm-mix-caps") }

    deinit {
        if let pad = gst_element_get_static_pad(volume, "sink") {
            let id = probeID.load(ordering: .relaxed)
            if id != 0 { gst_pad_remove_probe(pad, gulong(id)) }
            gst_object_unref(pad)
        }
        gst_object_unref(volume)
        gst_object_unref(bin)
    }

    /// A new item is loaded (the pipeline was reset): its gain applies at once, and to its stream when it starts.
    func load(_ item: PlaybackItem) {
        state.withLock { s in
            s.queued = [(item.token, item.gain)]
            s.group = nil
            s.current = item.token
            apply(item.gain, &s)
        }
    }

    /// `item` was handed over to follow gaplessly: its gain applies when its stream starts.
    func handOver(_ item: PlaybackItem) {
        state.withLock { $0.queued.append((item.token, item.gain)) }
    }

    /// A new gain for an item (the mode changed): at once if its stream plays, else when it starts.
    func update(token: UInt64, gain: Double) {
        state.withLock { s in
            for i in s.queued.indices where s.queued[i].token == token { s.queued[i].gain = gain }
            if s.current == token { apply(gain, &s) }
        }
    }

    /// The factor applied now.
    var applied: Double { state.withLock { $0.applied } }

    /// On the streaming thread, before the new stream's first buffer.
    private func streamStarted(group: UInt32?) {
        state.withLock { s in
            // A seek or a reconfiguration may repeat STREAM_START within a group: only a new group is a new stream.
            guard let group, group != s.group else { return }
            s.group = group
            guard !s.queued.isEmpty else { return }
            let next = s.queued.removeFirst()
            s.current = next.token
            apply(next.gain, &s)
        }
    }

    private func apply(_ gain: Double, _ s: inout State) {
        let factor = gain.isFinite ? min(10, max(0, gain)) : 1
        s.applied = factor
        tn_object_set_double(volume, "volume", factor)
    }
}

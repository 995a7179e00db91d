import CGStreamer

/// A bin with one sink and one src pad whose functions are Swift: the one bridge from GStreamer's streaming threads to
/// the audio filter's own elements (the crossfade, the period). Buffers, downstream events, the owner's upstream
/// queries and a pad going up or down go to the owner's handlers; upstream events and downstream queries pass through.
final class FilterPads: Sendable {
    /// What the owner does, on the streaming thread (`activated` on the thread changing the pipeline's state).
    struct Handlers: Sendable {
        var chain: @Sendable (UnsafeMutablePointer<GstBuffer>) -> GstFlowReturn
        var downstream: @Sendable (UnsafeMutablePointer<GstEvent>) -> gboolean
        /// A query from downstream; `passOn` asks upstream.
        var upstream: @Sendable (UnsafeMutablePointer<GstQuery>) -> gboolean
        var activated: @Sendable (Bool) -> Void
    }

    nonisolated(unsafe) let element: UnsafeMutablePointer<GstElement>
    nonisolated(unsafe) private let sinkPad: UnsafeMutablePointer<GstPad>
    nonisolated(unsafe) private let srcPad: UnsafeMutablePointer<GstPad>
    /// Set once by `handle`, before the element joins a pipeline; only read after.
    nonisolated(unsafe) private var handlers: Handlers?

    /// - Parameter name: the bin's name ("tonearm-crossfade").
    init(name: String) throws {
        guard let element = gst_bin_new(name) else {
            throw PlaybackError(domain: "core", code: 0, message: "cannot make the element \(name)")
        }
        _ = gst_object_ref_sink(element)
        self.element = element
        sinkPad = gst_pad_new("sink", GST_PAD_SINK)
        srcPad = gst_pad_new("src", GST_PAD_SRC)
        // Unretained: the owner keeps these pads alive as long as the pipeline that holds the element.
        let me = Unmanaged.passUnretained(self).toOpaque()
        gst_pad_set_element_private(sinkPad, me)
        gst_pad_set_element_private(srcPad, me)
        gst_pad_set_chain_function_full(sinkPad, { pad, _, buffer in
            guard let buffer else { return GST_FLOW_ERROR }
            guard let handlers = FilterPads.handlers(of: pad) else { gst_buffer_unref(buffer); return GST_FLOW_ERROR }
            return handlers.chain(buffer)
        }, nil, nil)
        gst_pad_set_event_function_full(sinkPad, { pad, _, event in
            guard let event else { return 0 }
            guard let handlers = FilterPads.handlers(of: pad) else { gst_event_unref(event); return 0 }
            return handlers.downstream(event)
        }, nil, nil)
        gst_pad_set_event_function_full(srcPad, { pad, _, event in
            guard let event else { return 0 }
            guard let me = FilterPads.owner(of: pad) else { gst_event_unref(event); return 0 }
            return gst_pad_push_event(me.sinkPad, event)
        }, nil, nil)
        gst_pad_set_query_function_full(sinkPad, { pad, _, query in
            guard let query, let me = FilterPads.owner(of: pad) else { return 0 }
            return gst_pad_peer_query(me.srcPad, query)
        }, nil, nil)
        gst_pad_set_query_function_full(srcPad, { pad, _, query in
            guard let query, let handlers = FilterPads.handlers(of: pad) else { return 0 }
            return handlers.upstream(query)
        }, nil, nil)
        gst_pad_set_activatemode_function_full(sinkPad, { pad, _, _, active in
            FilterPads.handlers(of: pad)?.activated(active != 0)
            return 1
        }, nil, nil)
        _ = gst_element_add_pad(element, sinkPad)
        _ = gst_element_add_pad(element, srcPad)
    }

    deinit {
        // The owner is gone already (these pads are its property): the pads' deactivation as the element is disposed
        // must find no one to call.
        gst_pad_set_element_private(sinkPad, nil)
        gst_pad_set_element_private(srcPad, nil)
        gst_object_unref(element)
    }

    /// Sets what the owner does; once, before the element joins a pipeline.
    func handle(_ handlers: Handlers) {
        self.handlers = handlers
    }

    /// Sends a buffer downstream.
    func push(_ buffer: UnsafeMutablePointer<GstBuffer>) -> GstFlowReturn { gst_pad_push(srcPad, buffer) }

    /// Sends an event downstream.
    @discardableResult
    func push(_ event: UnsafeMutablePointer<GstEvent>) -> gboolean { gst_pad_push_event(srcPad, event) }

    /// Asks upstream (a query the owner does not answer itself).
    func passOn(_ query: UnsafeMutablePointer<GstQuery>) -> gboolean { gst_pad_peer_query(sinkPad, query) }

    private static func owner(of pad: UnsafeMutablePointer<GstPad>?) -> FilterPads? {
        guard let pad, let data = gst_pad_get_element_private(pad) else { return nil }
        return Unmanaged<FilterPads>.fromOpaque(data).takeUnretainedValue()
    }

    private static func handlers(of pad: UnsafeMutablePointer<GstPad>?) -> Handlers? { owner(of: pad)?.handlers }
}

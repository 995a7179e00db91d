import CGStreamer
import Foundation

/// Decodes a whole file as fast as it goes, to prove it decodes to the end (a truncated file stops short or
/// fails). Blocking: run it off the cooperative pool.
public enum DecodeCheck {
    /// The length decoded, in ns. Throws `PlaybackError` when decoding fails or takes longer than `timeout`.
    public static func decodedLength(uri: String, timeout: Duration = .seconds(120)) throws(PlaybackError) -> Int64 {
        let decoder = try DecodePipeline(uri: uri, caps: nil, sink: "fakesink name=sink sync=false")
        decoder.set(GST_STATE_PLAYING)
        let deadline = ContinuousClock.now + timeout
        var last: Int64 = 0
        while ContinuousClock.now < deadline {
            let ended = try decoder.waitForEnd(timeout: 50 * tn_msecond())
            if let position = decoder.position() { last = max(last, position) }
            if ended { return last }
        }
        throw PlaybackError(domain: "core", code: 0, message: "decoding took longer than \(timeout)", debug: uri)
    }
}

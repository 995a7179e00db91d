/// The interleaved float format audio is mixed in.
struct MixingFormat: Equatable, Sendable {
    var rate: Int
    var channels: Int
}

/// What a stream that starts is, and how it comes in after the one before it.
struct StreamPlan: Equatable, Sendable {
    /// The overlap with the track before; nil joins them sample to sample.
    var fade: Crossfade?
    /// A live stream: nothing of it is held (it never ends on purpose), and it can only fade in.
    var live = false

    static let gapless = StreamPlan()
}

/// The crossfade as a plain value with no I/O: what comes down the audio path (samples, stream starts, segments,
/// other events) goes in, what to send on comes out. `Crossfader` feeds it from GStreamer's streaming thread.
///
/// playbin joins tracks back to back (gapless): the next track's first sample follows the current one's last. To
/// overlap them, the end of each track must still be on hand when the next one arrives, so the mixer holds back the
/// newest `hold` of the audio (a delay line: it is decoded that much ahead, heard at the same moment). When the next
/// track's stream starts with a fade planned, the held end of the old one, less its trailing silence, is taken out of
/// the line and mixed into the new one's first samples; the new track's segment is moved earlier by what was taken
/// out, so its running time follows on from the last old sample sent and nothing waits.
///
/// Below the hold, the line sends on a quarter of what comes in: it fills while the decoder runs at four times real
/// time or faster (local files decode at tens to hundreds of times), and the sink is never left waiting for it.
struct CrossfadeMixer<Event> {
    typealias Format = MixingFormat
    typealias Plan = StreamPlan

    /// What the shell learns from an event that matters here.
    enum Kind: Equatable {
        case streamStart(Plan)
        /// New caps: the mixing format, or nil when samples cannot be mixed (crossfade off: they pass as they are).
        case caps(Format?)
        case segment(rate: Double)
        case endOfStream
        /// Any other event that travels in order with the audio (tags, gaps).
        case other
    }

    enum Output {
        /// Samples to send, interleaved, with their presentation time (ns).
        case audio([Float], pts: Int64?, duration: Int64)
        /// An event to send; a segment's base is to be lowered by `baseShift` ns.
        case event(Event, baseShift: Int64)
    }

    private struct Chunk {
        var samples: [Float]
        var pts: Int64?
        var frames: Int
        var duration: Int64
    }

    private enum Entry {
        case audio(Chunk)
        case event(Event, isStreamStart: Bool, isSegment: Bool, shift: Int64)
    }

    /// A stream start seen, its first samples not yet: the old track's end is still in the line.
    private struct Pending {
        var plan: Plan
        var oldFormat: Format?
        var oldLive: Bool
    }

    /// The fade under way: the old track's end, mixed into the new one's samples as they come.
    private struct Fade {
        var tail: [Float]
        var frame = 0
        var frames: Int
        var curve: FadeCurve
        /// Fade the new track in, with nothing of the old (a live stream on either side).
        var inOnly: Bool
    }

    /// How much audio to hold back, in seconds (the longest fade plus the silence that may be skipped, and a margin);
    /// 0 passes everything on at once.
    var holdSeconds: Double = 0
    /// Samples below this (linear) at the end of a track count as silence.
    var silenceLevel: Float = 0.003_162 // -50 dBFS
    /// The most trailing silence skipped, in seconds.
    var maximumSilence: Double = CrossfadeFormat.maximumSilence

    private var entries: [Entry] = []
    private var heldFrames = 0
    private(set) var format: Format?
    private var live = false
    private var segmentRate = 1.0
    /// ns taken out of the timeline since the last flush: every later segment's base is lowered by it.
    private var shift: Int64 = 0
    private var pending: Pending?
    private var fade: Fade?
    private var lastEnd: Int64?
    /// Frames that may be sent on and have not been (less than the next chunk).
    private var credit = 0
    /// The audio sent on lately (about 3 s, of the stream heard now): a skip continues the cut track from where it
    /// is heard, which is behind what was sent by the queues after the filter.
    private var sent: [Chunk] = []
    private var sentFrames = 0
    /// What a skip cut short, to fade out under the next item's first samples.
    private var skip: Fade?
    private var skipFormat: Format?
    /// Whether the next item's stream has started since the skip: only its samples take the fade-out. Audio of the cut
    /// stream may still reach the mixer after the pipeline stopped (the streaming thread was inside its chain call).
    private var skipStreamStarted = false

    /// Nothing held, nothing under way, nothing to hold: buffers may bypass the mixer untouched (bit-exact).
    var isPassingThrough: Bool {
        entries.isEmpty && pending == nil && fade == nil && (format == nil || holdFrames == 0)
    }

    /// Whether a stream start is held in the line (the stream heard now is not the one upstream answers for).
    var holdsStreamStart: Bool {
        pending != nil || entries.contains { if case .event(_, true, _, _) = $0 { return true } else { return false } }
    }

    private var holdFrames: Int {
        guard let format, !live, holdSeconds > 0 else { return 0 }
        return Int(holdSeconds * Double(format.rate))
    }

    // MARK: - Inputs

    /// Samples of the current stream (interleaved, in `format`).
    mutating func audio(_ samples: [Float], pts: Int64?) -> [Output] {
        guard let format, format.channels > 0 else { return [.audio(samples, pts: pts, duration: 0)] }
        if let pending {
            self.pending = nil
            begin(pending, newFormat: format)
        }
        if let cut = skip, skipStreamStarted {
            skip = nil
            if fade == nil, skipFormat == format { fade = cut }
        }
        var samples = samples
        mixFade(into: &samples, channels: format.channels)
        let frames = samples.count / format.channels
        entries.append(.audio(Chunk(samples: samples, pts: pts, frames: frames, duration: nanoseconds(frames, format))))
        heldFrames += frames
        if let pts { lastEnd = pts + nanoseconds(frames, format) }
        return release(incoming: frames)
    }

    /// An event that travels in order with the audio.
    mutating func event(_ event: Event, _ kind: Kind) -> [Output] {
        var out: [Output] = []
        switch kind {
        case .streamStart(let plan):
            out += finishFade()
            if skip != nil { skipStreamStarted = true }
            // Nothing of a live stream's neighbour is mixed: what is held of the old track plays out while the stream
            // connects, rather than waiting for its first samples.
            if plan.live || live { out += releaseAll() }
            // Only a planned fade waits for the new stream's first samples; a join to the sample, crossfade off or
            // samples that cannot be mixed leave nothing to wait for, and the stream start goes on in order at once.
            let fades = plan.fade.map { $0.seconds > 0 } == true && holdSeconds > 0 && format != nil
            pending = fades ? Pending(plan: plan, oldFormat: format, oldLive: live) : nil
            live = plan.live
            entries.append(.event(event, isStreamStart: true, isSegment: false, shift: 0))
        case .caps(let newFormat):
            if newFormat == nil || (format != nil && newFormat != format && pending == nil) {
                // Samples that cannot be mixed from here on, or the mixing format changed mid-stream: send what is
                // held as it is first.
                out += finishFade() + releaseAll()
            }
            format = newFormat
            entries.append(.event(event, isStreamStart: false, isSegment: false, shift: 0))
        case .segment(let rate):
            segmentRate = rate == 0 ? 1 : abs(rate)
            entries.append(.event(event, isStreamStart: false, isSegment: true, shift: shift))
        case .endOfStream:
            out += finishFade()
            pending = nil
            entries.append(.event(event, isStreamStart: false, isSegment: false, shift: 0))
            return out + releaseAll()
        case .other:
            entries.append(.event(event, isStreamStart: false, isSegment: false, shift: 0))
        }
        // Events hold nothing back on their own; with no hold they go on at once.
        if holdFrames == 0 && pending == nil { out += releaseAll() }
        return out
    }

    /// The pipeline stops to open another item because a skip cut the playing one: what would have been heard next
    /// of it, `seconds` long, fades out under the new item's first samples (`curve`); the rest is dropped.
    ///
    /// `heard`: the position heard now (ns, stream time), when known: the fade continues from there, out of what was
    /// sent lately; without it, from what the line still held.
    mutating func flush(keepingForSkip seconds: Double, heard: Int64? = nil, curve: FadeCurve) {
        var kept: [Float] = []
        if let format, seconds > 0 {
            let wanted = Int(seconds * Double(format.rate)) * format.channels
            // Only the stream heard now: a next one already in the line is not what was cut.
            var source: [Chunk] = []
            for entry in entries {
                if case .audio(let chunk) = entry { source.append(chunk) }
                if case .event(_, true, _, _) = entry { break }
            }
            var from = 0
            let all = sent + source
            if let heard, let first = all.firstIndex(where: { chunk in chunk.pts.map { $0 + chunk.duration > heard } ?? false }) {
                source = Array(all[first...])
                if let pts = source[0].pts, heard > pts {
                    from = min(source[0].frames, Int((Double(heard - pts) * Double(format.rate) / 1e9).rounded())) * format.channels
                }
            }
            for chunk in source where kept.count < wanted {
                kept += chunk.samples[min(from, chunk.samples.count)...].prefix(wanted - kept.count)
                from = 0
            }
            let frames = kept.count / format.channels
            skip = frames > 0 ? Fade(tail: Array(kept[0..<(frames * format.channels)]), frames: frames, curve: curve, inOnly: false) : nil
            skipFormat = format
            skipStreamStarted = false
        }
        flush()
    }

    /// Drops what a skip left to fade out (the pipeline stopped for another reason since).
    mutating func forgetSkip() { skip = nil }

    /// A flush (seek) or the pipeline stopping: everything held is dropped and the timeline is the pipeline's again.
    mutating func flush() {
        sent.removeAll()
        sentFrames = 0
        entries.removeAll()
        heldFrames = 0
        shift = 0
        pending = nil
        fade = nil
        lastEnd = nil
        credit = 0
    }

    // MARK: - The fade

    private mutating func begin(_ pending: Pending, newFormat: Format) {
        guard let fadeSpec = pending.plan.fade, fadeSpec.seconds > 0 else { return }
        let fadeFrames = Int(fadeSpec.seconds * Double(newFormat.rate))
        guard fadeFrames > 0 else { return }
        guard !pending.plan.live, !pending.oldLive, pending.oldFormat == newFormat,
              let start = entries.lastIndex(where: { if case .event(_, true, _, _) = $0 { return true } else { return false } }) else {
            fade = Fade(tail: [], frames: fadeFrames, curve: fadeSpec.curve, inOnly: true)
            return
        }
        // The old track's audio: from the stream start before this one (or the head of the line) up to this one.
        let from = (entries[..<start].lastIndex { if case .event(_, true, _, _) = $0 { return true } else { return false } }).map { $0 + 1 } ?? 0
        let channels = newFormat.channels
        var old: [Float] = []
        var firstPTS: Int64?
        for entry in entries[from..<start] {
            if case .audio(let chunk) = entry {
                if firstPTS == nil { firstPTS = chunk.pts }
                old += chunk.samples
            }
        }
        let total = old.count / channels
        let silent = min(trailingSilentFrames(old, channels: channels), Int(maximumSilence * Double(newFormat.rate)))
        let audibleEnd = total - silent
        let length = min(fadeFrames, audibleEnd)
        let cut = audibleEnd - length
        guard total - cut > 0 else {
            fade = Fade(tail: [], frames: fadeFrames, curve: fadeSpec.curve, inOnly: true)
            return
        }
        // Put back what stays of the old audio, each part where it was among the events (a segment that came before
        // it must still go before it, or the sink would time it by the segment before).
        var kept: [Entry] = []
        var offset = 0
        for entry in entries[from..<start] {
            guard case .audio(let chunk) = entry else { kept.append(entry); continue }
            let keep = min(chunk.frames, max(0, cut - offset))
            offset += chunk.frames
            if keep == chunk.frames {
                kept.append(entry)
            } else if keep > 0 {
                kept.append(.audio(Chunk(samples: Array(chunk.samples[0..<(keep * channels)]), pts: chunk.pts, frames: keep,
                                         duration: nanoseconds(keep, newFormat))))
            }
        }
        entries.replaceSubrange(from..<start, with: kept)
        heldFrames -= total - cut
        let taken = Int64((Double(nanoseconds(total - cut, newFormat)) / segmentRate).rounded())
        shift += taken
        // Segments of the new stream already in the line come after the cut.
        let newStart = from + kept.count
        for i in newStart..<entries.count {
            if case .event(let e, let ss, true, let s) = entries[i] { entries[i] = .event(e, isStreamStart: ss, isSegment: true, shift: s + taken) }
        }
        let tail = length > 0 ? Array(old[(cut * channels)..<(audibleEnd * channels)]) : []
        fade = length > 0 ? Fade(tail: tail, frames: length, curve: fadeSpec.curve, inOnly: false) : nil
    }

    private mutating func mixFade(into samples: inout [Float], channels: Int) {
        guard var f = fade else { return }
        let frames = samples.count / channels
        var i = 0
        while i < frames && f.frame < f.frames {
            let g = f.curve.gains(at: (Double(f.frame) + 0.5) / Double(f.frames))
            for c in 0..<channels {
                let s = i * channels + c
                let old = f.inOnly ? 0 : f.tail[f.frame * channels + c]
                samples[s] = samples[s] * Float(g.in) + old * Float(g.out)
            }
            f.frame += 1
            i += 1
        }
        fade = f.frame < f.frames ? f : nil
    }

    /// The new track ended (or another began) before the fade did: the rest of the old track's end fades out alone.
    private mutating func finishFade() -> [Output] {
        guard let f = fade, let format else { fade = nil; return [] }
        fade = nil
        guard !f.inOnly, f.frame < f.frames else { return [] }
        var rest: [Float] = []
        rest.reserveCapacity((f.frames - f.frame) * format.channels)
        for frame in f.frame..<f.frames {
            let g = Float(f.curve.gains(at: (Double(frame) + 0.5) / Double(f.frames)).out)
            for c in 0..<format.channels { rest.append(f.tail[frame * format.channels + c] * g) }
        }
        let pts = lastEnd
        entries.append(.audio(Chunk(samples: rest, pts: pts, frames: f.frames - f.frame, duration: nanoseconds(f.frames - f.frame, format))))
        heldFrames += f.frames - f.frame
        if let pts { lastEnd = pts + nanoseconds(f.frames - f.frame, format) }
        return []
    }

    private func trailingSilentFrames(_ samples: [Float], channels: Int) -> Int {
        var frame = samples.count / channels
        while frame > 0 {
            let base = (frame - 1) * channels
            for c in 0..<channels where abs(samples[base + c]) > silenceLevel { return samples.count / channels - frame }
            frame -= 1
        }
        return samples.count / channels
    }

    // MARK: - Sending on

    /// Sends on from the front: down to the hold, or half of what came in while below it.
    private mutating func release(incoming: Int) -> [Output] {
        let hold = holdFrames
        guard hold > 0 else { return releaseAll() }
        // Whole chunks only, so what may go accrues until the next one fits.
        credit += heldFrames > hold ? heldFrames - hold : incoming / 4
        var released = 0
        var out: [Output] = []
        var count = 0
        while count < entries.count {
            switch entries[count] {
            case .audio(let chunk):
                guard chunk.frames <= credit else { break }
                credit -= chunk.frames
                released += chunk.frames
                out.append(.audio(chunk.samples, pts: chunk.pts, duration: chunk.duration))
                remember(entries[count])
                count += 1
                continue
            case .event(let e, _, _, let s):
                out.append(.event(e, baseShift: s))
                remember(entries[count])
                count += 1
                continue
            }
            break
        }
        entries.removeFirst(count)
        heldFrames -= released
        return out
    }

    /// Keeps what was sent lately, of the stream heard now, for a skip.
    private mutating func remember(_ entry: Entry) {
        switch entry {
        case .audio(let chunk):
            sent.append(chunk)
            sentFrames += chunk.frames
            let limit = 3 * (format?.rate ?? 44_100)
            while sentFrames - (sent.first?.frames ?? 0) > limit {
                sentFrames -= sent.removeFirst().frames
            }
        case .event(_, true, _, _):
            sent.removeAll()
            sentFrames = 0
        case .event:
            break
        }
    }

    private mutating func releaseAll() -> [Output] {
        for entry in entries { remember(entry) }
        let out: [Output] = entries.map {
            switch $0 {
            case .audio(let chunk): return .audio(chunk.samples, pts: chunk.pts, duration: chunk.duration)
            case .event(let e, _, _, let s): return .event(e, baseShift: s)
            }
        }
        entries.removeAll()
        heldFrames = 0
        credit = 0
        return out
    }

    private func nanoseconds(_ frames: Int, _ format: Format) -> Int64 {
        Int64(frames) * 1_000_000_000 / Int64(format.rate)
    }
}

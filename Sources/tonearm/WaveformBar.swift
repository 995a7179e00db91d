import Waveform

/// `status --follow`'s progress bar drawn as the track's waveform (block cells), the played part coloured.
enum WaveformBar {
    /// Cells of the bar when it is a waveform: wider than the plain bar, since its shape is worth the room.
    static let width = 40

    /// The bar's cells without colour, nil when the waveform is empty.
    static func plain(_ waveform: WaveformPeaks, width: Int) -> String? {
        let cells = TerminalWaveform.bar(waveform, width: width)
        return cells.isEmpty ? nil : String(cells)
    }

    /// `line` with its waveform bar coloured: played cells in the accent colour, the rest dim. Colour goes in after
    /// the line is fitted to the terminal, so escape codes never count as columns; a bar cut by the fitting stays
    /// plain.
    static func colour(_ line: String, state: PlayerState, width: Int, waveform: WaveformPeaks?) -> String {
        guard Style.enabled, let waveform, let cells = plain(waveform, width: width),
              let range = line.range(of: "[" + cells + "]") else { return line }
        let played = TerminalWaveform.playedCells(position: state.position, length: state.metadata.length, width: width)
        let split = cells.index(cells.startIndex, offsetBy: played)
        let drawn = "[" + (played > 0 ? Style.accent(String(cells[..<split])) : "")
            + (played < width ? Style.dim(String(cells[split...])) : "") + "]"
        return line.replacingCharacters(in: range, with: drawn)
    }
}

/// Fetches the current track's waveform once per track change, in the background, for `status --follow`.
struct WaveformFetcher {
    let client: PlayerClient
    /// Only a live display draws waveforms.
    let enabled: Bool
    let continuation: AsyncStream<StatusFollower.Event>.Continuation
    private var requested: String?
    private var task: Task<Void, Never>?

    init(client: PlayerClient, enabled: Bool, continuation: AsyncStream<StatusFollower.Event>.Continuation) {
        self.client = client
        self.enabled = enabled
        self.continuation = continuation
    }

    /// Asks for `track`'s waveform unless it was the last one asked for; true when the track changed (the waveform
    /// shown so far belongs to another track).
    @discardableResult
    mutating func follow(_ track: String?) -> Bool {
        guard track != requested else { return false }
        requested = track
        task?.cancel()
        task = nil
        guard enabled, let track, track != PlayerClient.noTrack else { return true }
        let client = self.client, continuation = self.continuation
        task = Task {
            // Enough pixels for any bar; the bar resamples them to its width.
            let peaks = try? await WaveformClient.fetch(client, target: track, width: 1024)
            if !Task.isCancelled { continuation.yield(.waveform(track, peaks)) }
        }
        return true
    }

    func cancel() { task?.cancel() }
}

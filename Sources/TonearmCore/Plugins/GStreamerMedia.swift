import Foundation
import Playback
import Waveform

/// `MediaOperations` backed by GStreamer (the Playback module): the one the daemon hands to plugins.
public struct GStreamerMedia: MediaOperations {
    /// An executable that measures loudness in a process of its own at the lowest CPU priority (`tonearmd
    /// --measure-loudness`); nil measures in this process.
    public let loudnessWorker: String?

    /// The GStreamer-backed operations (GStreamer is set up on first use). With `loudnessWorker`, loudness is measured
    /// by that executable in a process of its own, so the decoder's threads never compete with playback.
    public init(loudnessWorker: String? = nil) {
        self.loudnessWorker = loudnessWorker
    }

    public func probe(uri: String, timeout: Duration) throws(MediaError) -> ProbedMedia {
        do {
            let probed = try MediaProbe.probe(uri: uri, timeout: timeout)
            return ProbedMedia(duration: probed.duration, tags: probed.tags)
        } catch {
            throw MediaError(error, uri: uri)
        }
    }

    public func decodedLength(uri: String, timeout: Duration) throws(MediaError) -> Int64 {
        do { return try DecodeCheck.decodedLength(uri: uri, timeout: timeout) } catch { throw error }
    }

    public func typefind(path: String) -> String? {
        MediaExport.typefind(path)
    }

    public func passthroughPlan(file path: String) throws(MediaError) -> ExportPlan {
        do {
            let plan = try MediaExport.passthroughPlan(file: path)
            return ExportPlan(fileExtension: plan.fileExtension, recipe: plan.chain)
        } catch {
            throw error
        }
    }

    public func export(source: String, destination: String, mode: ExportMode, plan: ExportPlan?, cancellation: ExportCancellation,
                       progress: (Double) -> Void) throws(MediaError) {
        do {
            try MediaExport.run(source: source, destination: destination, mode: mode,
                                plan: plan.map { MediaExport.Plan(chain: $0.recipe, fileExtension: $0.fileExtension) },
                                isCancelled: { cancellation.isCancelled }, progress: progress)
        } catch {
            throw error
        }
    }

    public func waveform(uri: String, samplesPerPixel: Int, timeout: Duration) throws(MediaError) -> WaveformPeaks {
        var accumulator = PeakAccumulator(samplesPerPixel: samplesPerPixel)
        let format = try PCMDecoder.decode(uri: uri, timeout: timeout) { samples, channels in
            accumulator.add(samples, channels: channels)
        }
        return accumulator.peaks(sampleRate: format.sampleRate)
    }

    public func supportedMimeTypes() -> [String] {
        MediaSupport.supportedMimeTypes()
    }

    public func hasElement(_ name: String) -> Bool {
        MediaSupport.hasElement(name)
    }

    public func measureLoudness(uris: [String], control: MeasurementControl) -> LoudnessGroup {
        guard let loudnessWorker else {
            return LoudnessMeter.measure(uris: uris, paused: { control.shouldPause }, cancelled: { control.isCancelled })
        }
        return LoudnessWorker(executable: loudnessWorker).measure(uris: uris, control: control)
    }
}

extension MediaError {
    /// A `PlaybackError` as it is; anything else as a core error about `uri`.
    init(_ error: any Error, uri: String) {
        if let error = error as? PlaybackError {
            self = error
        } else {
            self.init(domain: "core", code: 0, message: "\(error)", debug: uri)
        }
    }
}

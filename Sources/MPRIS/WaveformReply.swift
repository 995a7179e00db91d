import DBus
import TonearmCore
import Waveform

/// Player1.Waveform: `(s Target, u Width) -> (u SampleRate, u SamplesPerPixel, t Samples, a(nn) Peaks)`.
enum WaveformReply {
    static func call(_ service: WaveformService?, target: String, width: DBusValue, player: Player) async throws -> [DBusValue] {
        guard let service else { throw TonearmError(.notSupported, "this player computes no waveforms") }
        guard case .uint32(let pixels) = width.unwrapped else { throw TonearmError.invalidValue("Width must be a u") }
        let peaks = try await service.peaks(target: target, width: Int(pixels), player: player)
        return encode(peaks)
    }

    static func encode(_ peaks: WaveformPeaks) -> [DBusValue] {
        var pairs: [DBusValue] = []
        pairs.reserveCapacity(peaks.count)
        for i in 0..<peaks.count { pairs.append(.structure([.int16(peaks.minima[i]), .int16(peaks.maxima[i])])) }
        return [.uint32(UInt32(clamping: peaks.sampleRate)), .uint32(UInt32(clamping: peaks.samplesPerPixel)),
                .uint64(UInt64(max(0, peaks.frames))), .array(element: "(nn)", pairs)]
    }
}

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import Waveform

/// A signal with a known shape: `silence` frames of 0, then `burst` frames of a ±`level` square wave, then `ramp`
/// frames rising from 0 by `step` a frame; `channels` copies, the second (if any) negated.
func signal(silence: Int, burst: Int, ramp: Int, level: Int16 = 20_000, step: Int = 1, channels: Int = 1) -> [Int16] {
    var mono: [Int16] = Array(repeating: 0, count: silence)
    mono += (0..<burst).map { $0 % 2 == 0 ? level : -level }
    mono += (0..<ramp).map { Int16(clamping: $0 * step) }
    return mono.flatMap { value in (0..<channels).map { $0 == 0 ? value : Int16(clamping: -Int(value)) } }
}

@Suite struct PeakTests {
    @Test func binsBySamplesWithPeaksAtTheRightPixels() {
        // 10 px of silence, 10 of burst, 20 of ramp at 100 frames a pixel.
        var acc = PeakAccumulator(samplesPerPixel: 100)
        acc.add(signal(silence: 1000, burst: 1000, ramp: 2000, step: 10), channels: 1)
        let peaks = acc.peaks(sampleRate: 8000)
        #expect(peaks.count == 40 && peaks.frames == 4000 && peaks.samplesPerPixel == 100)
        for x in 0..<10 { #expect(peaks.minima[x] == 0 && peaks.maxima[x] == 0, "silence at \(x)") }
        for x in 10..<20 { #expect(peaks.minima[x] == -20_000 && peaks.maxima[x] == 20_000, "burst at \(x)") }
        for x in 20..<40 {
            let first = (x - 20) * 100
            #expect(peaks.minima[x] == Int16(first * 10) && peaks.maxima[x] == Int16((first + 99) * 10), "ramp at \(x)")
        }
    }

    @Test func foldsChannelsAndKeepsAPartialLastPixel() {
        var acc = PeakAccumulator(samplesPerPixel: 64)
        let stereo = signal(silence: 0, burst: 0, ramp: 100, step: 100, channels: 2)
        // Fed in odd-sized pieces: pixels must not depend on how buffers fall.
        stereo.withUnsafeBufferPointer { all in
            var offset = 0
            for size in [6, 50, 2, 142] {
                acc.add(UnsafeBufferPointer(rebasing: all[offset..<(offset + size)]), channels: 2)
                offset += size
            }
        }
        let peaks = acc.peaks(sampleRate: 44100)
        #expect(peaks.frames == 100 && peaks.count == 2)
        #expect(peaks.maxima == [6300, 9900] && peaks.minima == [-6300, -9900])
    }

    @Test(arguments: [
        // (pairs, width, expected maxima): every pixel takes the extremes of the pairs it overlaps.
        ([1, 2, 3, 4], 2, [2, 4]),
        ([1, 2, 3, 4], 4, [1, 2, 3, 4]),
        ([1, 2, 3, 4], 1, [4]),
        ([1, 2, 3, 4], 3, [2, 3, 4]),
        ([1, 2], 4, [1, 1, 2, 2]),
        ([5, 1, 1, 1, 1, 9], 2, [5, 9]),
    ])
    func resamplesByFrames(pairs: [Int], width: Int, expected: [Int]) {
        let peaks = WaveformPeaks(sampleRate: 100, samplesPerPixel: 10, frames: pairs.count * 10,
                                  minima: pairs.map { Int16(-$0) }, maxima: pairs.map { Int16($0) })
        let out = peaks.resampled(width: width)
        #expect(out.maxima.map(Int.init) == expected)
        #expect(out.minima.map { -Int($0) } == expected)
        #expect(out.frames == peaks.frames && out.count == width)
    }

    @Test func resamplingAShortLastPairUsesTheFrameCount() {
        // 2.5 pairs' worth of frames: the half-full last pair covers the last fifth only.
        let peaks = WaveformPeaks(sampleRate: 100, samplesPerPixel: 100, frames: 250, minima: [-1, -2, -3], maxima: [1, 2, 3])
        #expect(peaks.resampled(width: 5).maxima == [1, 1, 2, 2, 3])
        #expect(peaks.resampled(width: 5).samplesPerPixel == 50)
        #expect(peaks.resampled(width: 0) == peaks)
    }
}

@Suite struct FormatTests {
    static let peaks = WaveformPeaks(sampleRate: 48000, samplesPerPixel: 512, frames: 1500,
                                     minima: [-32768, -5, 0], maxima: [32767, 7, 0])

    @Test func datHasTheDocumentedHeaderAndReadsBack() throws {
        let bytes = AudiowaveformFormat.dat(Self.peaks)
        #expect(bytes.count == 24 + 3 * 4)
        func i32(_ o: Int) -> Int32 { Int32(bitPattern: UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24) }
        #expect([i32(0), i32(4), i32(8), i32(12), i32(16), i32(20)] == [2, 0, 48000, 512, 3, 1])
        #expect(Array(bytes[24..<28]) == [0x00, 0x80, 0xFF, 0x7F])  // -32768, 32767 little-endian
        let back = try AudiowaveformFormat.readDat(bytes)
        #expect(back.minima == Self.peaks.minima && back.maxima == Self.peaks.maxima)
        #expect(back.sampleRate == 48000 && back.samplesPerPixel == 512 && back.frames == 3 * 512)
    }

    @Test func datReaderTakesVersion1EightBitAndSeveralChannels() throws {
        // Version 1, 8-bit: header of 20 bytes.
        var v1: [UInt8] = [1, 0, 0, 0, 1, 0, 0, 0, 0x44, 0xAC, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0]
        v1 += [0xF6, 10, 0x80, 127]  // (-10, 10), (-128, 127)
        let one = try AudiowaveformFormat.readDat(v1)
        #expect(one.minima == [-2560, -32768] && one.maxima == [2560, 32512] && one.sampleRate == 44100)
        // Version 2, 16-bit, two channels: folded into one.
        var v2: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x1F, 0, 0, 64, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]
        v2 += [0xFF, 0xFF, 1, 0, 0xF0, 0xFF, 0x20, 0]  // ch0 (-1, 1), ch1 (-16, 32)
        let two = try AudiowaveformFormat.readDat(v2)
        #expect(two.minima == [-16] && two.maxima == [32])
        #expect(throws: AudiowaveformFormat.ReadError.self) { try AudiowaveformFormat.readDat(Array(v2.dropLast(2))) }
        #expect(throws: AudiowaveformFormat.ReadError.self) { try AudiowaveformFormat.readDat([9, 0, 0, 0] + Array(repeating: 0, count: 20)) }
    }

    @Test func jsonHasEveryFieldAndParses() throws {
        let text = AudiowaveformFormat.json(Self.peaks)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 2 && object["channels"] as? Int == 1 && object["bits"] as? Int == 16)
        #expect(object["sample_rate"] as? Int == 48000 && object["samples_per_pixel"] as? Int == 512 && object["length"] as? Int == 3)
        #expect(object["data"] as? [Int] == [-32768, 32767, -5, 7, 0, 0])
    }

    @Test func pngDecodesToTheWaveform() throws {
        var acc = PeakAccumulator(samplesPerPixel: 100)
        acc.add(signal(silence: 1000, burst: 1000, ramp: 2000, step: 10), channels: 1)
        let bytes = try WaveformImage.png(acc.peaks(sampleRate: 8000), width: 40, height: 100)
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let image = try #require(DecodedPNG(bytes))
        #expect(image.width == 40 && image.height == 100)
        // Silence: the centre line only; burst: ±20000 of 32768 → rows 19…80; ramp: above the centre, rising.
        for x in 0..<10 { #expect(image.drawnRows(x) == [50], "silence at \(x)") }
        for x in 10..<20 { #expect(image.drawnRows(x).first == 19 && image.drawnRows(x).last == 80, "burst at \(x)") }
        let tops = (20..<40).map { image.drawnRows($0).first ?? -1 }
        #expect(tops == tops.sorted(by: >) && tops.last! < tops.first!, "the ramp rises: \(tops)")
        #expect((20..<40).allSatisfy { image.drawnRows($0).last! <= 50 })
        #expect(image.rgba[(50 * 40 + 12) * 4 ..< (50 * 40 + 12) * 4 + 4] == [0x2F, 0x6F, 0xB5, 0xFF])
        #expect(image.alpha(12, 5) == 0)
        #expect(throws: WaveformImage.Failure.self) { try WaveformImage.png(acc.peaks(sampleRate: 8000), width: 0, height: 10) }
    }

    @Test func svgIsWellFormedAndFollowsThePeaks() throws {
        let peaks = WaveformPeaks(sampleRate: 100, samplesPerPixel: 1, frames: 2, minima: [0, -16384], maxima: [0, 16384])
        let svg = WaveformImage.svg(peaks, width: 2, height: 100)
        let document = try XMLDocument(data: Data(svg.utf8))
        let path = try #require(try document.nodes(forXPath: "//*[local-name()='path']/@d").first?.stringValue)
        #expect(path == "M0,50L1,50L1,25L2,25L2,75L1,75L1,50L0,50Z")
        #expect(svg.contains("width=\"2\" height=\"100\""))
    }
}

@Suite struct TerminalTests {
    @Test func brailleDrawsAMirroredShape() {
        let peaks = WaveformPeaks(sampleRate: 100, samplesPerPixel: 1, frames: 4,
                                  minima: [0, -32768, 0, -16384], maxima: [0, 32767, 0, 16384])
        let rows = TerminalWaveform.braille(peaks, columns: 2, rows: 2)
        // 8 dot rows: silence lights row 4 only (left column of cell 0 → dot 1 of the lower cell); full scale all 8;
        // half scale rows 2…6.
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == 2 })
        let lower = Array(rows[1].unicodeScalars).map { $0.value - 0x2800 }
        let upper = Array(rows[0].unicodeScalars).map { $0.value - 0x2800 }
        // Cell 0: left column silence (dot row 4 = lower cell's top dot, bit 0x01), right column full (all 8 dots).
        #expect(upper[0] == 0x08 | 0x10 | 0x20 | 0x80 && lower[0] == 0x01 | 0x08 | 0x10 | 0x20 | 0x80)
        // Cell 1: left silence (lower 0x01); right half scale: rows 2…6 → upper dots 3,4 (0x20, 0x80), lower 5,6,7 (0x08, 0x10, 0x20).
        #expect(upper[1] == 0x20 | 0x80 && lower[1] == 0x01 | 0x08 | 0x10 | 0x20)
    }

    static let blockCases: [(Int16, Character)] = [(0, "▁"), (4096, "▁"), (4097, "▂"), (16384, "▄"), (32767, "█")]
    static let playedCases: [(Int64, Int64?, Int)] = [(0, 100, 0), (50, 100, 20), (100, 100, 40), (150, 100, 40), (10, nil, 0), (10, 0, 0)]

    @Test(arguments: blockCases)
    func blockHeightFollowsLoudness(peak: Int16, block: Character) {
        let peaks = WaveformPeaks(sampleRate: 1, samplesPerPixel: 1, frames: 1, minima: [-peak], maxima: [peak])
        #expect(TerminalWaveform.bar(peaks, width: 1) == [block])
    }

    @Test(arguments: playedCases)
    func playedCells(position: Int64, length: Int64?, cells: Int) {
        #expect(TerminalWaveform.playedCells(position: position, length: length, width: 40) == cells)
    }
}

/// Waveforms drawn with Unicode characters for a terminal: braille cells (2 × 4 dots each) for a picture several rows
/// tall, block elements (▁…█) for a one-line bar.
public enum TerminalWaveform {
    /// The eight block heights, lowest first.
    public static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// Dot bits of a braille cell by (column, row): dots 1-2-3-7 down the left, 4-5-6-8 down the right.
    private static let dotBits: [[UInt32]] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]]

    /// `rows` lines of `columns` braille cells: the waveform mirrored around its centre, 2 dots per cell across and 4
    /// down, so `peaks` is resampled to 2 × `columns` dot columns.
    public static func braille(_ peaks: WaveformPeaks, columns: Int, rows: Int) -> [String] {
        guard columns > 0, rows > 0 else { return [] }
        let dots = peaks.count > 0 ? peaks.resampled(width: columns * 2) : nil
        let height = rows * 4
        var cells = [[UInt32]](repeating: [UInt32](repeating: 0, count: columns), count: rows)
        if let dots {
            for x in 0..<dots.count {
                for y in WaveformImage.rows(minimum: dots.minima[x], maximum: dots.maxima[x], height: height) {
                    cells[y / 4][x / 2] |= dotBits[x % 2][y % 4]
                }
            }
        }
        return cells.map { row in String(String.UnicodeScalarView(row.map { Unicode.Scalar(0x2800 + $0)! })) }
    }

    /// One line of `width` block characters, each as tall as the loudest sample it covers (at least ▁).
    public static func bar(_ peaks: WaveformPeaks, width: Int) -> [Character] {
        guard width > 0, peaks.count > 0 else { return [] }
        return peaks.resampled(width: width).amplitudes.map { amplitude in
            blocks[min(blocks.count - 1, max(0, Int((amplitude * Double(blocks.count)).rounded(.up)) - 1))]
        }
    }

    /// How many of `width` cells are played at `position` of `length` (any one unit).
    public static func playedCells(position: Int64, length: Int64?, width: Int) -> Int {
        guard let length, length > 0 else { return 0 }
        let fraction = min(1, max(0, Double(position) / Double(length)))
        return min(width, Int((fraction * Double(width)).rounded(.down)))
    }
}

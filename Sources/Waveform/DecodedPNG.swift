internal import CPNG

/// A PNG decoded to 8-bit RGBA with libpng's simplified API: how a drawn waveform is checked.
public struct DecodedPNG: Sendable {
    public let width: Int
    public let height: Int
    public let rgba: [UInt8]

    /// Decodes `bytes`; nil when they are not a PNG libpng can read.
    public init?(_ bytes: [UInt8]) {
        var image = tn_png_image()
        let began = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard began != 0 else { return nil }
        image.format = tn_png_format_rgba
        let w = Int(image.width), h = Int(image.height)
        width = w
        height = h
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, png_int_32(w * 4), nil) }
        png_image_free(&image)
        guard finished != 0 else { return nil }
        rgba = pixels
    }

    /// The alpha of the pixel at (x, y).
    public func alpha(_ x: Int, _ y: Int) -> UInt8 { rgba[(y * width + x) * 4 + 3] }

    /// The rows of column `x` that are drawn (opaque), top to bottom.
    public func drawnRows(_ x: Int) -> [Int] { (0..<height).filter { alpha(x, $0) > 0 } }
}

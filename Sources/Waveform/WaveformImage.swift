internal import CPNG

/// A colour with alpha, 0–255 each.
public struct RGBA: Sendable, Equatable {
    public var red, green, blue, alpha: UInt8

    /// A colour from its four components.
    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// `#rrggbb` or `#rrggbbaa` (the `#` optional); nil when it is neither.
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
        let full = digits.count == 6 ? value << 8 | 0xFF : value
        self.init(UInt8(full >> 24), UInt8(full >> 16 & 0xFF), UInt8(full >> 8 & 0xFF), UInt8(full & 0xFF))
    }

    /// `#rrggbb` (the alpha goes in SVG's `fill-opacity`).
    public var hexRGB: String {
        let digits = Array("0123456789abcdef")
        return "#" + [red, green, blue].map { String([digits[Int($0 >> 4)], digits[Int($0 & 0xF)]]) }.joined()
    }
}

/// Pictures of a waveform: the area between each pixel's minimum and maximum, filled, around a centre line.
public enum WaveformImage {
    /// The default waveform colour (a muted blue) and background (transparent).
    public static let defaultColour = RGBA(0x2F, 0x6F, 0xB5)
    public static let defaultBackground = RGBA(0, 0, 0, 0)

    /// Why an image could not be made.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The rows a pixel's min/max covers in an image `height` rows tall (row 0 at the top, full scale at the edges);
    /// at least the centre row, so silence draws a line.
    public static func rows(minimum: Int16, maximum: Int16, height: Int) -> ClosedRange<Int> {
        let half = Double(height) / 2
        func row(_ value: Int16) -> Int {
            let y = half - Double(value) / 32768 * half
            return min(height - 1, max(0, Int(y.rounded(.down))))
        }
        let top = row(max(maximum, minimum)), bottom = row(min(minimum, maximum))
        return top...max(top, bottom)
    }

    /// RGBA pixels (row by row, 4 bytes each) of `peaks` drawn `peaks.count` pixels wide and `height` tall.
    public static func pixels(_ peaks: WaveformPeaks, height: Int, colour: RGBA, background: RGBA) -> [UInt8] {
        let width = peaks.count
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: out.count, by: 4) {
            out[i] = background.red; out[i + 1] = background.green; out[i + 2] = background.blue; out[i + 3] = background.alpha
        }
        for x in 0..<width {
            for y in rows(minimum: peaks.minima[x], maximum: peaks.maxima[x], height: height) {
                let i = (y * width + x) * 4
                out[i] = colour.red; out[i + 1] = colour.green; out[i + 2] = colour.blue; out[i + 3] = colour.alpha
            }
        }
        return out
    }

    /// A PNG (8-bit RGBA, through libpng) of `peaks` resampled to `width` × `height` pixels.
    public static func png(_ peaks: WaveformPeaks, width: Int, height: Int, colour: RGBA = defaultColour,
                           background: RGBA = defaultBackground) throws(Failure) -> [UInt8] {
        guard width > 0, height > 0, width <= 65_535, height <= 65_535 else {
            throw Failure(description: "a PNG must be 1 to 65535 pixels each way (asked \(width)×\(height))")
        }
        guard peaks.count > 0 else { throw Failure(description: "no audio to draw") }
        let rgba = pixels(peaks.resampled(width: width), height: height, colour: colour, background: background)
        var image = tn_png_image()
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        image.format = tn_png_format_rgba
        var size: png_alloc_size_t = 0
        let stride = png_int_32(width * 4)
        let measured = rgba.withUnsafeBytes { png_image_write_to_memory(&image, nil, &size, 0, $0.baseAddress, stride, nil) }
        guard measured != 0, size > 0 else { throw Failure(description: "libpng: \(message(&image))") }
        var out = [UInt8](repeating: 0, count: Int(size))
        let written = out.withUnsafeMutableBytes { buffer in
            rgba.withUnsafeBytes { png_image_write_to_memory(&image, buffer.baseAddress, &size, 0, $0.baseAddress, stride, nil) }
        }
        png_image_free(&image)
        guard written != 0 else { throw Failure(description: "libpng: \(message(&image))") }
        return Array(out.prefix(Int(size)))
    }

    private static func message(_ image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// An SVG of `peaks` resampled to `width` × `height`: one closed path along the maxima and back along the minima.
    public static func svg(_ peaks: WaveformPeaks, width: Int, height: Int, colour: RGBA = defaultColour,
                           background: RGBA = defaultBackground) -> String {
        let fitted = peaks.count > 0 ? peaks.resampled(width: max(1, width)) : peaks
        let half = Double(height) / 2
        func y(_ value: Int16) -> String { format(half - Double(value) / 32768 * half) }
        var top = "", bottom = ""
        for x in 0..<fitted.count {
            // Each pixel spans x…x+1; its top edge follows the maximum, its bottom edge the minimum.
            top += "\(x == 0 ? "M" : "L")\(x),\(y(fitted.maxima[x]))L\(x + 1),\(y(fitted.maxima[x]))"
            let back = fitted.count - 1 - x
            bottom += "L\(back + 1),\(y(fitted.minima[back]))L\(back),\(y(fitted.minima[back]))"
        }
        var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">\n"
        if background.alpha > 0 {
            svg += "<rect width=\"\(width)\" height=\"\(height)\" fill=\"\(background.hexRGB)\" fill-opacity=\"\(format(Double(background.alpha) / 255))\"/>\n"
        }
        svg += "<line x1=\"0\" y1=\"\(format(half))\" x2=\"\(width)\" y2=\"\(format(half))\" stroke=\"\(colour.hexRGB)\" stroke-width=\"0.5\"/>\n"
        if fitted.count > 0 {
            svg += "<path d=\"\(top)\(bottom)Z\" fill=\"\(colour.hexRGB)\" fill-opacity=\"\(format(Double(colour.alpha) / 255))\"/>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// A coordinate with at most two decimals.
    private static func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let whole = abs(hundredths) / 100, fraction = abs(hundredths) % 100
        if fraction == 0 { return sign + String(whole) }
        return sign + String(whole) + "." + (fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0" : "") + String(fraction))
    }
}
